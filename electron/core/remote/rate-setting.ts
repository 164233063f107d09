/**
 * A request rate set in the environment (e.g. FERRY_OSF_RATE_PER_SECOND): a positive number
 * of requests a second, or undefined when unset or not one (the target's default then holds).
 */
export function rateFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const rate = Number(env[name]);
  return Number.isFinite(rate) && rate > 0 ? rate : undefined;
}
