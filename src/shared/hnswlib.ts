/**
 * hnswlib-node, loaded so that `bun build --compile` can embed it. The package finds its addon with
 * `bindings`, which searches the disk at run time and fails inside a single binary; requiring the .node
 * file by a literal path lets the bundler embed it and the binary extract and load it. Import hnswlib
 * from here, never from "hnswlib-node".
 */
import type * as Hnswlib from "hnswlib-node";

// A literal relative path is what makes the bundler embed the addon; keep it a plain string.
const addon: typeof Hnswlib = require("../../node_modules/hnswlib-node/build/Release/addon.node");

export const HierarchicalNSW: typeof Hnswlib.HierarchicalNSW = addon.HierarchicalNSW;
export const BruteforceSearch: typeof Hnswlib.BruteforceSearch = addon.BruteforceSearch;
export const L2Space: typeof Hnswlib.L2Space = addon.L2Space;
export const InnerProductSpace: typeof Hnswlib.InnerProductSpace = addon.InnerProductSpace;
export type HierarchicalNSW = Hnswlib.HierarchicalNSW;
export type BruteforceSearch = Hnswlib.BruteforceSearch;
export type SearchResult = Hnswlib.SearchResult;
export type SpaceName = Hnswlib.SpaceName;
export type FilterFunction = Hnswlib.FilterFunction;
