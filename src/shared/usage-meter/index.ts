import type { RedisClient } from "bun";
import type { Database } from "../../db/client";
import type { Logger } from "../logger";
import { MemoryUsageMeter } from "./memory";
import { RedisUsageMeter } from "./redis";
import type { UsageMeter } from "./types";

export { MemoryUsageMeter } from "./memory";
export { RedisUsageMeter } from "./redis";
export type { UsageCounts, UsageMeter, UsageRow } from "./types";
export { emptyCounts, USAGE_FIELDS, utcDay } from "./types";

export function createUsageMeter(options: {
  database: Database;
  logger: Logger;
  redis?: RedisClient | undefined;
  prefix?: string;
  flushIntervalMs?: number;
}): UsageMeter {
  return options.redis === undefined
    ? new MemoryUsageMeter(options.database, options.logger, options.flushIntervalMs)
    : new RedisUsageMeter(
        options.redis,
        options.database,
        options.logger,
        options.prefix,
        options.flushIntervalMs,
      );
}
