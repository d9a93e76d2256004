export * from "./analytics";
export * from "./billing";
export * from "./catalogue";
export * from "./identity";
export * from "./jobs";
