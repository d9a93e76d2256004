// Runs the training pipeline inside a Bun Worker, as the job runner does, and posts back the artifact.
import { serializeModel } from "../../src/engine/serialize";
import { type TrainInput, trainModel } from "../../src/engine/train";

declare const self: Worker;

self.onmessage = (event: MessageEvent<TrainInput>) => {
  const stages: string[] = [];
  const result = trainModel(event.data, { annMinItems: 0 }, (stage) => stages.push(stage));
  const bytes = serializeModel(result.model);
  self.postMessage({ bytes, metrics: result.metrics, stages }, [bytes.buffer as ArrayBuffer]);
};
