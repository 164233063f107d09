import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

// Fastify compiles a validator (Ajv) for every request schema and a serializer
// (fast-json-stringify) for every response schema of every route while the server starts:
// with the contract's schemas ~0.75 s of CPU and ~65 MiB of garbage at every start of `ferry
// serve` and of the desktop app (whose window waits for its server), most of it for routes and
// error answers a session never uses. The builders here compile each one the first time it is
// used instead. It is the same function, compiled by Fastify's own compilers from the same
// schema with the same options, so what is accepted, refused and answered stays the same;
// only the moment it is compiled moves.
//
// What moves with it: a schema Ajv or fast-json-stringify refuses would fail at its first use
// instead of at the start. `compileEverySchema` compiles every one at once, and a test runs it
// over the real server, so such a schema fails the tests, not a person's request.

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type ValidatorFactory = NonNullable<CompilersFactory['buildValidator']>;
type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

export class LazyCompilers {
  /** each function handed out and not yet compiled, by the function that compiles it */
  private readonly uncompiled = new Set<() => unknown>();
  // Fastify's own builders, made once as Fastify makes them: the Ajv one keeps one Ajv instance
  // for each set of shared schemas and options (making one is most of the cost of compiling)
  private readonly ajvCompilers = AjvCompiler() as unknown as (schemas: unknown, options: unknown) => (route: RouteSchema) => Validate;
  private readonly serializerCompilers = SerializerSelector();

  /** Fastify's `schemaController.compilersFactory`. */
  readonly factory: CompilersFactory = {
    buildValidator: ((externalSchemas: unknown, options: unknown) => {
      const compile = this.ajvCompilers(externalSchemas, options);
      return (route: RouteSchema) => {
        if (route.httpPart === 'headers') refuseUpperCaseHeaderNames(route);
        const compiled = this.once(() => compile(route));
        // Fastify reads `errors` after a refusal, and passes the parent (so that Ajv may replace
        // a coerced root value, a lone string where an array is asked for) only to a function
        // with `schemaEnv`, as Ajv's have
        const validate: Validate = (data, context) => {
          const real = compiled();
          const valid = real(data, context);
          validate.errors = real.errors;
          return valid;
        };
        validate.schemaEnv = true;
        return validate;
      };
    }) as ValidatorFactory,
    buildSerializer: ((externalSchemas, options) => {
      const compile = this.serializerCompilers(externalSchemas, options);
      return (route) => {
        const compiled = this.once(() => compile(route) as (data: unknown) => string);
        return (data: unknown) => compiled()(data);
      };
    }) satisfies SerializerFactory,
  };

  /** Compiles every function not yet compiled; throws what compiling one throws. Returns how many it compiled. */
  compileAll(): number {
    const pending = [...this.uncompiled];
    for (const compile of pending) compile();
    return pending.length;
  }

  private once<T>(compile: () => T): () => T {
    let compiled: { value: T } | null = null;
    const get = (): T => {
      if (compiled) return compiled.value;
      compiled = { value: compile() };
      this.uncompiled.delete(get);
      return compiled.value;
    };
    this.uncompiled.add(get);
    return get;
  }
}

interface RouteSchema {
  schema: unknown;
  method?: string;
  url?: string;
  httpPart?: string;
}

/**
 * Fastify lower-cases the header names of a headers schema before compiling it (Node gives
 * every header name in lower case), but not when the compiler is a custom one, as this is. So
 * a header schema must name its headers in lower case already: one that does not is refused
 * when its route is declared, not left to match nothing.
 */
function refuseUpperCaseHeaderNames(route: RouteSchema): void {
  const names: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' || key === 'dependencies' || key === 'dependentSchemas' || key === 'dependentRequired') {
        if (value && typeof value === 'object') names.push(...Object.keys(value));
      }
      if (key === 'required' && Array.isArray(value)) names.push(...value.filter((name): name is string => typeof name === 'string'));
      walk(value);
    }
  };
  walk(route.schema);
  const upper = names.filter((name) => name !== name.toLowerCase());
  if (upper.length > 0) throw new Error(`The headers schema of ${route.method} ${route.url} names ${upper.join(', ')}: write header names in lower case.`);
}

const ofServer = new WeakMap<FastifyInstance, LazyCompilers>();

export function attachLazyCompilers(app: FastifyInstance, compilers: LazyCompilers): void {
  ofServer.set(app, compilers);
}

/** Compiles every validator and serializer of `app` now (see above); 0 for a server without lazy ones. */
export function compileEverySchema(app: FastifyInstance): number {
  return ofServer.get(app)?.compileAll() ?? 0;
}
