import type { Config } from "../../config";

/**
 * Platform administrator: the user's e-mail is listed in ADMIN_EMAILS *and* verified. Listing alone is not
 * enough: anyone can register, or change their e-mail to, a listed address they do not own.
 */
export const isPlatformAdmin = (
  config: Pick<Config, "adminEmails">,
  email: string,
  emailVerified: boolean,
): boolean => emailVerified && config.adminEmails.includes(email);
