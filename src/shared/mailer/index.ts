/**
 * Outgoing e-mail behind one small interface: SMTP (nodemailer) when SMTP_URL is set, otherwise an outbox
 * directory of `.eml` files under DATA_DIR/outbox, so a local install can still complete sign-up.
 */
import type { Config } from "../../config";
import type { Logger } from "../logger";
import { OutboxMailer } from "./outbox";
import { SmtpMailer } from "./smtp";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The action link inside the message; only the outbox mailer logs it, so a local user can follow it. */
  actionLink?: string;
}

export interface Mailer {
  readonly kind: "smtp" | "outbox";
  send(message: MailMessage): Promise<void>;
}

export const MAIL_FROM = "Recommendation Service <no-reply@localhost>";

export function createMailer(config: Config, logger: Logger): Mailer {
  return config.smtpUrl !== undefined
    ? new SmtpMailer(config.smtpUrl, logger)
    : new OutboxMailer(`${config.dataDir}/outbox`, logger);
}
