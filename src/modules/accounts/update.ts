import { eq } from "drizzle-orm";
import { accounts } from "../../db/schema";
import type { AppDeps } from "../../deps";
import type { TenantContext } from "../../http/auth";
import { AppError, notFound, validationError } from "../../shared/errors";
import { toAccountOutput } from "./get";
import type { AccountUpdateInput } from "./schemas";

interface Changes {
  name?: string;
  isActive?: boolean;
  onboardingChecklistStatus?: Record<string, unknown>;
  paymentCustomerId?: string | null;
}

const MAX_CHECKLIST_BYTES = 16 * 1024;

const isAdmin = (ctx: TenantContext): boolean => ctx.actor.type === "user" && ctx.actor.isAdmin;

/** PUT: platform administrators only; `name` and `is_active` are required, the rest optional. */
export async function replaceCurrentAccount(args: {
  ctx: TenantContext;
  deps: AppDeps;
  input: AccountUpdateInput;
}) {
  if (!isAdmin(args.ctx))
    throw new AppError("ADMIN_REQUIRED", "Only platform administrators may replace an account");
  const changes = readChanges(args.input);
  const missing = (["name", "isActive"] as const).filter((field) => changes[field] === undefined);
  if (missing.length > 0) {
    throw validationError(
      missing.map((field) => ({
        loc: ["body", field === "isActive" ? "is_active" : field],
        msg: "Required for a full update",
        type: "value_error.missing",
      })),
    );
  }
  return applyChanges(args.ctx, args.deps, changes);
}

/** PATCH: anyone may change the onboarding checklist; name, is_active and the customer id need an admin. */
export async function patchCurrentAccount(args: {
  ctx: TenantContext;
  deps: AppDeps;
  input: AccountUpdateInput;
}) {
  const changes = readChanges(args.input);
  const adminOnly = (["name", "isActive", "paymentCustomerId"] as const).filter(
    (f) => changes[f] !== undefined,
  );
  if (adminOnly.length > 0 && !isAdmin(args.ctx)) {
    throw new AppError("ADMIN_REQUIRED", `Only platform administrators may change ${adminOnly.join(", ")}`);
  }
  return applyChanges(args.ctx, args.deps, changes);
}

async function applyChanges(ctx: TenantContext, deps: AppDeps, changes: Changes) {
  const [row] = await deps.database.db
    .update(accounts)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(accounts.id, ctx.accountId))
    .returning();
  if (row === undefined) throw notFound("Account");
  await deps.identity.accounts.changed(ctx.accountId);
  return toAccountOutput(row);
}

function readChanges(input: AccountUpdateInput): Changes {
  const changes: Changes = {};
  if (input.name !== undefined) changes.name = input.name.trim();
  const isActive = either(input.is_active, input.isActive, "is_active");
  if (isActive !== undefined) changes.isActive = isActive;
  const checklist = either(
    input.onboarding_checklist_status,
    input.onboardingChecklistStatus,
    "onboarding_checklist_status",
  );
  if (checklist !== undefined) {
    if (JSON.stringify(checklist).length > MAX_CHECKLIST_BYTES) {
      throw validationError([
        { loc: ["body", "onboarding_checklist_status"], msg: "At most 16 KB", type: "value_error.too_large" },
      ]);
    }
    changes.onboardingChecklistStatus = checklist;
  }
  const customerId = either(input.payment_customer_id, input.paymentCustomerId, "payment_customer_id");
  if (customerId !== undefined) changes.paymentCustomerId = customerId;
  return changes;
}

function either<T>(snake: T | undefined, camel: T | undefined, field: string): T | undefined {
  if (snake !== undefined && camel !== undefined && JSON.stringify(snake) !== JSON.stringify(camel)) {
    throw validationError([
      {
        loc: ["body", field],
        msg: "Sent twice (snake_case and camelCase) with different values",
        type: "value_error.conflict",
      },
    ]);
  }
  return snake ?? camel;
}
