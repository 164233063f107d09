import type { NamingRules } from '../../plan/naming-rules.js';

/**
 * What git cannot store, declared by the git targets (Target.namingRules): a `.git` path
 * segment, in any case (git's verify_path refuses it, as a repository's own folder).
 */
export const GIT_NAMING_RULES: NamingRules = { reservedNames: ['.git'], evidence: "git's verify_path (read-cache.c): no '.git' segment, any case" };
