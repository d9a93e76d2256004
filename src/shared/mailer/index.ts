/**
 * Outgoing e-mail behind one small interface: SMTP (nodemailer) when SMTP_URL is set, otherwise an outbox
 * directory of `.eml` files under DATA_DIR/outbox, so a local install can still complete sign-up.
 */
import type { Config } from "../../config";
import type { Logger } from "../logger";
import type { Mailer } from "./mailer";
import { OutboxMailer } from "./outbox";
import { SmtpMailer } from "./smtp";

export { MAIL_FROM, type Mailer, type MailMessage } from "./mailer";

export function createMailer(config: Config, logger: Logger): Mailer {
  return config.smtpUrl !== undefined
    ? new SmtpMailer(config.smtpUrl, logger)
    : new OutboxMailer(`${config.dataDir}/outbox`, logger);
}
