/**
 * Who queued a training job (training_jobs.started_by): the customer (the training route, the sandbox
 * quick-start), or the service itself after end users were erased, which the plan's trainings per day
 * never count (src/modules/training/erasure-retraining.ts).
 */
export type TrainingStarter = "customer" | "erasure";

export const STARTED_BY_CUSTOMER: TrainingStarter = "customer";
export const STARTED_BY_ERASURE: TrainingStarter = "erasure";
