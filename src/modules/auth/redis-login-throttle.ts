/**
 * Login throttling shared by every process through Redis: each e-mail's and each IP's failures are a sorted
 * set of failure times, trimmed to the window when read and expiring with it. While Redis cannot be reached
 * this process counts on its own (logged), so an outage neither locks everyone out nor lifts the limit.
 */
import type { RedisClient } from "bun";
import type { Logger } from "../../shared/logger";
import {
  DEFAULT_LOGIN_LIMITS,
  type LoginThrottle,
  MemoryLoginThrottle,
  secondsUntilBelow,
  type ThrottleLimits,
} from "./login-throttle";

export class RedisLoginThrottle implements LoginThrottle {
  private readonly local: MemoryLoginThrottle;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly limits: ThrottleLimits = DEFAULT_LOGIN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    this.local = new MemoryLoginThrottle(limits, now);
  }

  async retryAfter(email: string, ip: string): Promise<number> {
    try {
      const [byEmail, byIp] = await Promise.all([
        this.wait(this.emailKey(email), this.limits.perEmail),
        this.wait(this.ipKey(ip), this.limits.perIp),
      ]);
      return Math.max(byEmail, byIp, await this.local.retryAfter(email, ip));
    } catch (error) {
      this.unavailable(error);
      return this.local.retryAfter(email, ip);
    }
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    const at = this.now();
    const window = String(this.limits.windowMs);
    try {
      await Promise.all(
        [this.emailKey(email), this.ipKey(ip)].map(async (key) => {
          // A unique member per failure: two failures in one millisecond both count.
          await this.client.send("ZADD", [key, String(at), `${at}:${crypto.randomUUID()}`]);
          await this.client.send("PEXPIRE", [key, window]);
        }),
      );
    } catch (error) {
      this.unavailable(error);
      await this.local.recordFailure(email, ip);
    }
  }

  async recordSuccess(email: string): Promise<void> {
    await this.local.recordSuccess(email);
    try {
      await this.client.send("DEL", [this.emailKey(email)]);
    } catch (error) {
      this.unavailable(error);
    }
  }

  private unavailable(error: unknown): void {
    this.logger.error("login throttle store unavailable; counting in this process", { error });
  }

  private async wait(key: string, limit: number): Promise<number> {
    const now = this.now();
    await this.client.send("ZREMRANGEBYSCORE", [key, "-inf", String(now - this.limits.windowMs)]);
    const count = Number(await this.client.send("ZCARD", [key]));
    if (count < limit) return 0;
    // The failure that must leave the window before one more attempt is allowed.
    const reply = (await this.client.send("ZRANGE", [
      key,
      String(count - limit),
      String(count - limit),
      "WITHSCORES",
    ])) as unknown;
    return secondsUntilBelow(oldestScore(reply) ?? now, this.limits.windowMs, now);
  }

  private emailKey(email: string): string {
    return `${this.prefix}e:${email}`;
  }

  private ipKey(ip: string): string {
    return `${this.prefix}i:${ip}`;
  }
}

/** The score of a one-member `ZRANGE … WITHSCORES` reply, whichever shape the client gives it. */
function oldestScore(reply: unknown): number | undefined {
  if (!Array.isArray(reply) || reply.length === 0) return undefined;
  const first = reply[0];
  // RESP3 answers [[member, score]]; RESP2 answers [member, score].
  const score = Array.isArray(first) ? first[1] : reply[1];
  const value = Number(score);
  return Number.isFinite(value) ? value : undefined;
}
