import type { experiments } from "../../db/schema";
import type { Arm, Experiment } from "./schemas";

type Row = typeof experiments.$inferSelect;

export function toExperiment(row: Row): Experiment {
  return {
    id: row.id,
    name: row.name,
    endpoint: row.endpoint,
    status: row.status === "running" ? "running" : "stopped",
    variants: row.variants as Arm[],
    minimumEffect: row.minimumEffect,
    createdAt: row.createdAt.toISOString(),
    stoppedAt: row.stoppedAt === null ? null : row.stoppedAt.toISOString(),
  };
}
