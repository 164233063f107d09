import type { Target } from './target.js';
import { notFound } from './errors.js';

/** The targets this core serves, in the order the UI lists them. */
export class TargetRegistry {
  private readonly targets = new Map<string, Target>();
  private changes = 0;

  /** Moves on whenever a target comes or goes (local folders change at run time), so a cached list can tell it is stale. */
  get generation(): number {
    return this.changes;
  }

  register(target: Target): void {
    if (this.targets.has(target.info.name)) throw new Error(`target ${target.info.name} registered twice`);
    this.targets.set(target.info.name, target);
    this.changes++;
  }

  /** Takes a target out (a local folder or an rclone remote the person removed); answers it so it can be closed. */
  unregister(name: string): Target | undefined {
    const target = this.targets.get(name);
    if (this.targets.delete(name)) this.changes++;
    return target;
  }

  all(): Target[] {
    return [...this.targets.values()];
  }

  find(name: string): Target | undefined {
    return this.targets.get(name);
  }

  get(name: string): Target {
    const target = this.targets.get(name);
    if (!target) throw notFound(`There is no target named '${name.length > 80 ? `${name.slice(0, 80)}…` : name}'. GET /api_v1/targets/ lists them.`, 'target_not_found');
    return target;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all().map((target) => target.close?.()));
  }
}
