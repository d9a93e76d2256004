/**
 * Login throttling shared by every process through Redis: each window is a sorted set of attempt times.
 * One Lua script trims, checks and records all three windows, so the reservation is atomic across
 * processes. While Redis cannot be reached this process counts on its own (see RedisCircuit), so an
 * outage neither locks everyone out nor lifts the limit.
 */
import type { RedisClient } from "bun";
import type { Logger } from "../../shared/logger";
import { RedisCircuit } from "../../shared/rate-limit/circuit";
import {
  DEFAULT_LOGIN_LIMITS,
  type LoginReservation,
  type LoginThrottle,
  MemoryLoginThrottle,
  secondsUntilBelow,
  type ThrottleLimits,
  throttleKeys,
} from "./login-throttle";

/**
 * KEYS: the windows. ARGV: now, window ms, member, then one limit per key. Answers '0' when the attempt was
 * recorded in every window, else "<time (ms) of the oldest attempt that must leave the window that blocks
 * longest>:<that window's limit>".
 */
const RESERVE_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local blockedUntil = 0
local blockingLimit = 0
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  local limit = tonumber(ARGV[3 + i])
  local count = redis.call('ZCARD', KEYS[i])
  if count >= limit then
    local oldest = redis.call('ZRANGE', KEYS[i], count - limit, count - limit, 'WITHSCORES')
    local at = tonumber(oldest[2])
    if at > blockedUntil then
      blockedUntil = at
      blockingLimit = limit
    end
  end
end
if blockedUntil > 0 then return tostring(blockedUntil) .. ':' .. tostring(blockingLimit) end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[i], window)
end
return '0'
`;

export class RedisLoginThrottle implements LoginThrottle {
  private readonly local: MemoryLoginThrottle;
  private readonly circuit: RedisCircuit;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    logger: Logger,
    private readonly limits: ThrottleLimits = DEFAULT_LOGIN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.local = new MemoryLoginThrottle(limits, now);
    this.circuit = new RedisCircuit(client, logger, "login throttles", now);
  }

  reserve(email: string, client: string): Promise<LoginReservation> {
    return this.circuit.run(
      () => this.reserveRemote(email, client),
      () => this.local.reserve(email, client),
    );
  }

  async succeeded(
    email: string,
    client: string,
    reservation: LoginReservation & { allowed: true },
  ): Promise<void> {
    await this.local.succeeded(email, client, reservation);
    const [pair, ...others] = throttleKeys(email, client, this.limits).map(({ key }) => this.prefix + key);
    await this.circuit.run(
      async () => {
        await Promise.all([
          this.client.send("DEL", [pair ?? ""]),
          ...others.map((key) => this.client.send("ZREM", [key, reservation.id])),
        ]);
      },
      () => undefined,
    );
  }

  private async reserveRemote(email: string, client: string): Promise<LoginReservation> {
    const now = this.now();
    const windows = throttleKeys(email, client, this.limits);
    const id = `${now}:${crypto.randomUUID()}`;
    const reply = await this.client.send("EVAL", [
      RESERVE_SCRIPT,
      String(windows.length),
      ...windows.map(({ key }) => this.prefix + key),
      String(now),
      String(this.limits.windowMs),
      id,
      ...windows.map(({ limit }) => String(limit)),
    ]);
    const [oldest, limit] = String(reply).split(":").map(Number);
    if (oldest !== undefined && oldest > 0) {
      const retryAfter = secondsUntilBelow(oldest, this.limits.windowMs, now);
      return { allowed: false, retryAfter, limit: limit ?? 0 };
    }
    return { allowed: true, id, at: now };
  }
}
