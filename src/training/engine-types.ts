/**
 * The engine's types as training and snapshots name them. A leaf of its own so that the worker protocol and
 * the parameter reproduction can use them without importing `engine-api.ts`, which imports both.
 */
import type { Interactions, ItemMeta, Model, TrainOptions } from "../engine";

export type EngineInteractions = Interactions;
export type EngineItemMeta = ItemMeta;
export type EngineModel = Model;
export type EngineTrainOptions = TrainOptions;
