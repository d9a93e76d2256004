/**
 * The endpoints an experiment can run on, named as in the analytics report, each with the overrides that act
 * on it: the personalised query takes its request parameters, the presets the diversity re-ranking, and every
 * endpoint a pinned model version (the listings rank with the model too: similarity, trained popularity).
 * Plain data, so the dashboard's experiment form offers exactly what the service checks.
 */
export const ENDPOINT_OVERRIDES = {
  "personalized/query": ["strategy", "recommendation_goal", "model_variant", "model_version"],
  "ecommerce/homepage": ["model_variant", "model_version"],
  "ecommerce/product-page": ["model_variant", "model_version"],
  "ecommerce/cart": ["model_variant", "model_version"],
  "ecommerce/checkout": ["model_variant", "model_version"],
  "products/similar": ["model_version"],
  category: ["model_version"],
} as const satisfies Record<string, readonly string[]>;
export type ExperimentEndpoint = keyof typeof ENDPOINT_OVERRIDES;
export const EXPERIMENT_ENDPOINTS = Object.keys(ENDPOINT_OVERRIDES) as ExperimentEndpoint[];
