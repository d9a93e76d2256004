import { eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { accounts } from "../../db/schema";
import type { TenantContext } from "../../http/tenant";
import { AppError, notFound, validationError } from "../../shared/errors";
import type { Identity } from "../auth/identity";
import { toAccountOutput } from "./get";
import type { AccountUpdateInput } from "./schemas";

type UpdateDeps = { readonly database: Database; readonly identity: Identity };

const MAX_CHECKLIST_BYTES = 16 * 1024;

const isAdmin = (ctx: TenantContext): boolean => ctx.actor.type === "user" && ctx.actor.isAdmin;

/** PUT: platform administrators only; `name` and `is_active` are required, the checklist is replaced. */
export async function replaceCurrentAccount(args: {
  ctx: TenantContext;
  deps: UpdateDeps;
  input: AccountUpdateInput;
}) {
  if (!isAdmin(args.ctx))
    throw new AppError("ADMIN_REQUIRED", "Only platform administrators may replace an account");
  const missing = (["name", "is_active"] as const).filter((field) => args.input[field] === undefined);
  if (missing.length > 0) {
    throw validationError(
      missing.map((field) => ({
        loc: ["body", field],
        msg: "Required for a full update",
        type: "value_error.missing",
      })),
    );
  }
  return applyChanges(args.ctx, args.deps, args.input, "replace");
}

/**
 * PATCH: anyone may change the onboarding checklist, whose keys are merged into the stored object (two
 * steps of an onboarding flow each set their own key); name, is_active and the customer id need an admin.
 */
export async function patchCurrentAccount(args: {
  ctx: TenantContext;
  deps: UpdateDeps;
  input: AccountUpdateInput;
}) {
  const adminOnly = (["name", "is_active", "payment_customer_id"] as const).filter(
    (field) => args.input[field] !== undefined,
  );
  if (adminOnly.length > 0 && !isAdmin(args.ctx)) {
    throw new AppError("ADMIN_REQUIRED", `Only platform administrators may change ${adminOnly.join(", ")}`);
  }
  return applyChanges(args.ctx, args.deps, args.input, "merge");
}

async function applyChanges(
  ctx: TenantContext,
  deps: UpdateDeps,
  input: AccountUpdateInput,
  checklistMode: "replace" | "merge",
) {
  const checklist = input.onboarding_checklist_status;
  const row = await deps.database.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(accounts)
      .set({
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(input.is_active !== undefined ? { isActive: input.is_active } : {}),
        ...(input.payment_customer_id !== undefined ? { paymentCustomerId: input.payment_customer_id } : {}),
        ...(checklist === undefined
          ? {}
          : checklistMode === "replace"
            ? { onboardingChecklistStatus: checklist }
            : {
                onboardingChecklistStatus: sql`${accounts.onboardingChecklistStatus} || ${JSON.stringify(checklist)}::jsonb`,
              }),
        updatedAt: new Date(),
      })
      .where(eq(accounts.id, ctx.accountId))
      .returning();
    if (updated === undefined) throw notFound("Account");
    // Checked on the merged object, inside the transaction: a refused merge changes nothing.
    if (JSON.stringify(updated.onboardingChecklistStatus).length > MAX_CHECKLIST_BYTES) {
      throw validationError([
        {
          loc: ["body", "onboarding_checklist_status"],
          msg: "At most 16 KB in all",
          type: "value_error.too_large",
        },
      ]);
    }
    return updated;
  });
  await deps.identity.accounts.changed(ctx.accountId);
  return toAccountOutput(row);
}
