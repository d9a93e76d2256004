import type { BenchContext, BenchPart, PartOutput } from "../lib/types";
import { NotAvailable } from "../lib/types";

export const memoryPart: BenchPart = {
  name: "memory",
  description: "resident bytes per tenant snapshot and per item; serialized bytes per item",
  async run(_ctx: BenchContext): Promise<PartOutput> {
    throw new NotAvailable("tenant snapshot serialization is not exported by the engine");
  },
};
