import type { RedisClient } from "bun";
import type { RateDecision, RateLimiter, RateRule, RuleState } from "./types";

/**
 * One Lua script reads every counter, decides, and charges all of them, so the decision is atomic across
 * every process sharing the Redis server. ARGV: cost, then limit/resetAt/floor per key.
 */
const CONSUME_SCRIPT = `
local cost = tonumber(ARGV[1])
local counts = {}
local blocked = 0
for i = 1, #KEYS do
  local limit = tonumber(ARGV[(i - 1) * 3 + 2])
  local floor = tonumber(ARGV[(i - 1) * 3 + 4])
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  if floor > c then c = floor end
  counts[i] = c
  if blocked == 0 and c + cost > limit then blocked = i end
end
if blocked == 0 then
  for i = 1, #KEYS do
    counts[i] = counts[i] + cost
    redis.call('SET', KEYS[i], counts[i])
    redis.call('PEXPIREAT', KEYS[i], ARGV[(i - 1) * 3 + 3])
  end
end
local out = { blocked }
for i = 1, #KEYS do out[i + 1] = counts[i] end
return out
`;

const SCRIPT_SHA = new Bun.CryptoHasher("sha1").update(CONSUME_SCRIPT).digest("hex");

export class RedisRateLimiter implements RateLimiter {
  readonly kind = "redis" as const;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {}

  async consume(rules: readonly RateRule[], cost = 1): Promise<RateDecision> {
    const keys = rules.map((rule) => `${this.prefix}${rule.key}`);
    const args = [String(cost)];
    for (const rule of rules)
      args.push(String(rule.limit), String(Math.ceil(rule.resetAt)), String(rule.floor ?? 0));
    const reply = (await this.evaluate(keys, args)) as number[];
    const blockedBy = Number(reply[0]) - 1;
    const states: RuleState[] = rules.map((rule, i) => ({
      key: rule.key,
      limit: rule.limit,
      remaining: Math.max(0, rule.limit - Number(reply[i + 1])),
      resetAt: rule.resetAt,
    }));
    return { allowed: blockedBy === -1, blockedBy, rules: states };
  }

  async close(): Promise<void> {}

  private async evaluate(keys: string[], args: string[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await this.client.send("EVALSHA", [SCRIPT_SHA, ...tail]);
    } catch (error) {
      // The server forgets scripts on restart or SCRIPT FLUSH; sending the body loads it again.
      if (!String((error as Error).message).includes("NOSCRIPT")) throw error;
      return this.client.send("EVAL", [CONSUME_SCRIPT, ...tail]);
    }
  }
}
