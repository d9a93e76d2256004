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

/** The fields only platform administrators may change; everyone may change `onboarding_checklist_status`. */
const ADMIN_ONLY_FIELDS = ["name", "is_active", "payment_customer_id"] as const;

/** PUT replaces the whole account: platform administrators only, whatever the body holds. */
export function mayReplaceAccount(ctx: TenantContext): void {
  if (!isAdmin(ctx))
    throw new AppError("ADMIN_REQUIRED", "Only platform administrators may replace an account");
}

/**
 * PATCH by anyone but a platform administrator may not name an admin-only field, whatever its value.
 * The route runs this on the body as sent, before validating it, so such a caller is told 403 rather than
 * what is wrong with a field it may not change anyway.
 */
export function mayPatchAccount(ctx: TenantContext, body: unknown): void {
  if (isAdmin(ctx) || typeof body !== "object" || body === null) return;
  const named = ADMIN_ONLY_FIELDS.filter((field) => Object.hasOwn(body, field));
  if (named.length > 0) {
    throw new AppError("ADMIN_REQUIRED", `Only platform administrators may change ${named.join(", ")}`);
  }
}

/** PUT: platform administrators only; `name` and `is_active` are required, the checklist is replaced. */
export async function replaceCurrentAccount(args: {
  ctx: TenantContext;
  deps: UpdateDeps;
  input: AccountUpdateInput;
}) {
  mayReplaceAccount(args.ctx);
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
  mayPatchAccount(args.ctx, args.input);
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
