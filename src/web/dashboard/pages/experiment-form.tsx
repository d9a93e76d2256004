import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import {
  EXPERIMENT_ENDPOINTS as ENDPOINTS,
  type ExperimentEndpoint,
  ENDPOINT_OVERRIDES as OVERRIDES,
} from "../../../modules/experiments/endpoints";
import { api, type Experiment, type NewExperiment } from "../api";
import { ErrorNote, FieldError, fieldIssues, useAction, useAsync } from "../ui";

type Override = (typeof OVERRIDES)[ExperimentEndpoint][number];

const CHOICES = {
  strategy: ["hybrid", "collab", "content_based", "popularity"],
  recommendation_goal: ["user_engagement", "conversion", "revenue", "discovery"],
  model_variant: ["standard", "diverse"],
} as const;
type Choice = keyof typeof CHOICES;

const LABEL: Record<Override, string> = {
  strategy: "Strategy",
  recommendation_goal: "Goal",
  model_variant: "Variant",
  model_version: "Model version",
};

interface ArmDraft {
  name: string;
  /** Percent of end users, as typed. */
  traffic: string;
  /** Override → chosen value; "" leaves it as the request asks (or the published model). */
  overrides: Partial<Record<Override, string>>;
}

const MAX_ARMS = 10;
const NAME_PATTERN = /^[A-Za-z0-9_.-]+$/;

/** Shares in whole hundredths of a percent, the remainder on the last arm, so that they add up to 100. */
function evenShares(count: number): string[] {
  const each = Math.floor(10_000 / count) / 100;
  return Array.from({ length: count }, (_, at) =>
    at < count - 1 ? String(each) : String(Math.round((100 - each * (count - 1)) * 100) / 100),
  );
}

const percentOf = (text: string): number => (text.trim() === "" ? Number.NaN : Number(text));
/** A percentage as the fraction the service takes, without float noise (33.34 → 0.3334, not 0.33340000000000003). */
const fractionOf = (text: string): number => Number((percentOf(text) / 100).toFixed(10));

/** What is wrong before anything is sent, by field path ("name", "variants", "variants.1.traffic", …). */
function checkDraft(name: string, arms: ArmDraft[], minimumEffect: string): Map<string, string> {
  const problems = new Map<string, string>();
  if (name.trim() === "") problems.set("name", "Give the experiment a name.");
  const seen = new Set<string>();
  arms.forEach((arm, at) => {
    const armName = arm.name.trim();
    if (armName === "") problems.set(`variants.${at}.name`, "Give the arm a name.");
    else if (armName.length > 64) problems.set(`variants.${at}.name`, "At most 64 characters.");
    else if (!NAME_PATTERN.test(armName))
      problems.set(`variants.${at}.name`, "Letters, digits, dots, dashes and underscores only (no spaces).");
    else if (seen.has(armName)) problems.set(`variants.${at}.name`, "Another arm already has this name.");
    seen.add(armName);
    const share = percentOf(arm.traffic);
    if (!(share > 0 && share <= 100))
      problems.set(`variants.${at}.traffic`, "A share above 0% and at most 100%.");
  });
  const total = arms.reduce((sum, arm) => sum + (percentOf(arm.traffic) || 0), 0);
  if (Math.abs(total - 100) > 1e-4) {
    const shown = Math.round(total * 100) / 100;
    problems.set("variants", `The arms' shares add up to ${shown}%; they must add up to exactly 100%.`);
  }
  const effect = percentOf(minimumEffect);
  if (!(effect > 0 && effect <= 1000))
    problems.set("minimum_effect", "A difference above 0% and at most 1000%.");
  return problems;
}

function toRequest(
  name: string,
  endpoint: ExperimentEndpoint,
  arms: ArmDraft[],
  minimumEffect: string,
): NewExperiment {
  const applicable: readonly Override[] = OVERRIDES[endpoint];
  return {
    name: name.trim(),
    endpoint,
    variants: arms.map((arm) => {
      const overrides: Record<string, string | number> = {};
      for (const key of applicable) {
        const value = arm.overrides[key];
        if (value === undefined || value === "") continue;
        overrides[key] = key === "model_version" ? Number(value) : value;
      }
      return {
        name: arm.name.trim(),
        traffic: fractionOf(arm.traffic),
        ...(Object.keys(overrides).length > 0
          ? { overrides: overrides as NewExperiment["variants"][0]["overrides"] }
          : {}),
      };
    }),
    minimum_effect: fractionOf(minimumEffect),
  };
}

/** A 422 issue this form shows next to its field rather than in the list under the form. */
const placedAtField = (loc: (string | number)[]): boolean =>
  /^body\.(name|endpoint|minimum_effect|variants(\.\d+\.(name|traffic|overrides\.[a-z_]+))?)$/.test(
    loc.join("."),
  );

/** Creating an experiment starts it: the form is the whole of "start an experiment". */
export function ExperimentForm(props: { onCreated: (experiment: Experiment) => void; onCancel: () => void }) {
  const models = useAsync(() => api.listModels(50), []);
  const [name, setName] = useState("");
  const [endpoint, setEndpoint] = useState<ExperimentEndpoint>("personalized/query");
  const [arms, setArms] = useState<ArmDraft[]>([
    { name: "control", traffic: "50", overrides: {} },
    { name: "treatment", traffic: "50", overrides: {} },
  ]);
  const [minimumEffect, setMinimumEffect] = useState("10");
  const [checked, setChecked] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const create = useAction(async () =>
    props.onCreated(await api.createExperiment(toRequest(name, endpoint, arms, minimumEffect))),
  );
  const problems = checkDraft(name, arms, minimumEffect);
  // A field's message: the page's own check once submitted, then what the service answered about it.
  const issues = (path: (string | number)[]): string[] => [
    ...(checked && problems.has(path.join(".")) ? [problems.get(path.join(".")) as string] : []),
    ...fieldIssues(create.error, path),
  ];
  const field = (path: (string | number)[]) => {
    const id = `experiment-${path.join("-")}-error`;
    const messages = issues(path);
    return {
      input: { "aria-invalid": messages.length > 0, "aria-describedby": id },
      error: <FieldError id={id} messages={messages} />,
    };
  };
  const change = (at: number, update: Partial<ArmDraft>) =>
    setArms(arms.map((arm, index) => (index === at ? { ...arm, ...update } : arm)));
  const nameField = field(["name"]);
  const armsField = field(["variants"]);
  const effectField = field(["minimum_effect"]);
  return (
    <form
      class="card"
      aria-labelledby="new-experiment-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        setChecked(true);
        create.clear();
        if (problems.size === 0) void create.run();
      }}
    >
      <h3 id="new-experiment-title">New experiment</h3>
      <p class="muted">
        It starts as soon as it is created: from their next request, end users of the endpoint are split into
        the arms (each keeps their arm). One experiment may run per endpoint; stop it here when the verdict is
        in.
      </p>
      <div class="row">
        <div class="field">
          <label>
            Name
            <input
              ref={first}
              maxLength={200}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              {...nameField.input}
            />
          </label>
          {nameField.error}
        </div>
        <label>
          Endpoint
          <select value={endpoint} onChange={(e) => setEndpoint(e.currentTarget.value as ExperimentEndpoint)}>
            {ENDPOINTS.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        <div class="field">
          <label>
            Smallest difference worth finding (% of the control's rate)
            <input
              type="number"
              min="0.01"
              max="1000"
              step="any"
              value={minimumEffect}
              onInput={(e) => setMinimumEffect(e.currentTarget.value)}
              {...effectField.input}
            />
          </label>
          {effectField.error}
        </div>
      </div>
      <fieldset aria-describedby="experiment-variants-error">
        <legend>Arms (the first is the control)</legend>
        {arms.map((arm, at) => (
          <ArmFields
            key={at}
            at={at}
            arm={arm}
            applicable={OVERRIDES[endpoint]}
            versions={models.data?.map((m) => ({ version: m.version, published: m.isPublished })) ?? []}
            field={field}
            onChange={(update) => change(at, update)}
            onRemove={arms.length > 2 ? () => setArms(arms.filter((_, index) => index !== at)) : undefined}
          />
        ))}
        <p class="row">
          <button
            type="button"
            class="secondary"
            disabled={arms.length >= MAX_ARMS}
            onClick={() =>
              setArms([...arms, { name: `arm-${arms.length + 1}`, traffic: "0", overrides: {} }])
            }
          >
            Add an arm
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              const shares = evenShares(arms.length);
              setArms(arms.map((arm, at) => ({ ...arm, traffic: shares[at] ?? "0" })));
            }}
          >
            Split the traffic evenly
          </button>
        </p>
        {armsField.error}
      </fieldset>
      <ErrorNote error={create.error} omit={placedAtField} />
      <p class="row">
        <button type="submit" disabled={create.busy}>
          Start the experiment{create.busy && "…"}
        </button>
        <button type="button" class="secondary" onClick={props.onCancel} disabled={create.busy}>
          Cancel
        </button>
      </p>
    </form>
  );
}

type FieldOf = (path: (string | number)[]) => {
  input: { "aria-invalid": boolean; "aria-describedby": string };
  error: ComponentChildren;
};

function ArmFields(props: {
  at: number;
  arm: ArmDraft;
  applicable: readonly Override[];
  versions: { version: number; published: boolean }[];
  field: FieldOf;
  onChange: (update: Partial<ArmDraft>) => void;
  onRemove: (() => void) | undefined;
}) {
  const { at, arm, applicable, field, onChange } = props;
  const nameField = field(["variants", at, "name"]);
  const trafficField = field(["variants", at, "traffic"]);
  const setOverride = (key: Override, value: string) =>
    onChange({ overrides: { ...arm.overrides, [key]: value } });
  return (
    <fieldset data-testid="arm-fields">
      <legend>
        Arm {at + 1}
        {at === 0 && " (control)"}
      </legend>
      <div class="row">
        <div class="field">
          <label>
            Arm name
            <input
              maxLength={64}
              value={arm.name}
              onInput={(e) => onChange({ name: e.currentTarget.value })}
              {...nameField.input}
            />
          </label>
          {nameField.error}
        </div>
        <div class="field">
          <label>
            Traffic (%)
            <input
              type="number"
              min="0"
              max="100"
              step="any"
              value={arm.traffic}
              onInput={(e) => onChange({ traffic: e.currentTarget.value })}
              {...trafficField.input}
            />
          </label>
          {trafficField.error}
        </div>
        {applicable.map((key) => {
          const overrideField = field(["variants", at, "overrides", key]);
          return (
            <div class="field" key={key}>
              <label>
                {LABEL[key]}
                <select
                  value={arm.overrides[key] ?? ""}
                  onChange={(e) => setOverride(key, e.currentTarget.value)}
                  {...overrideField.input}
                >
                  {key === "model_version" ? (
                    <>
                      <option value="">the published model</option>
                      {props.versions.map(({ version, published }) => (
                        <option key={version} value={String(version)}>
                          version {version}
                          {published ? " (published)" : ""}
                        </option>
                      ))}
                    </>
                  ) : (
                    <>
                      <option value="">as the request asks</option>
                      {CHOICES[key as Choice].map((value) => (
                        <option key={value} value={value}>
                          {value}
                        </option>
                      ))}
                    </>
                  )}
                </select>
              </label>
              {overrideField.error}
            </div>
          );
        })}
        {props.onRemove !== undefined && (
          <button type="button" class="secondary" onClick={props.onRemove}>
            Remove arm {at + 1}
          </button>
        )}
      </div>
    </fieldset>
  );
}
