/**
 * Deterministic arm assignment: a hash of (experiment id, end user) mapped onto the arms' traffic shares, so
 * an end user gets the same arm in every process and on every request, without storing assignments, and
 * different experiments split users independently.
 */
import type { Arm } from "./schemas";

/** FNV-1a (32-bit) over the UTF-16 code units, then a murmur3 finaliser for avalanche. */
export function hashToUnit(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

export function assignArm<A extends Pick<Arm, "traffic">>(
  experimentId: number,
  externalUserId: string,
  arms: readonly A[],
): A {
  const u = hashToUnit(`${experimentId}\u0000${externalUserId}`);
  let total = 0;
  for (const arm of arms) total += arm.traffic;
  let cumulative = 0;
  for (const arm of arms) {
    cumulative += arm.traffic / total;
    if (u < cumulative) return arm;
  }
  return arms[arms.length - 1]!;
}
