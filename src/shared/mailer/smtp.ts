import nodemailer, { type Transporter } from "nodemailer";
import type { Logger } from "../logger";
import { MAIL_FROM, type Mailer, type MailMessage } from "./mailer";

/** Sends through the SMTP server named by SMTP_URL (smtp:// or smtps://, credentials in the URL). */
export class SmtpMailer implements Mailer {
  readonly kind = "smtp" as const;
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly logger: Logger,
  ) {
    this.transport = nodemailer.createTransport(smtpUrl);
  }

  async send(message: MailMessage): Promise<void> {
    const info = await this.transport.sendMail({
      from: MAIL_FROM,
      to: message.to,
      subject: message.subject,
      text: message.text,
    });
    // Never the link: it carries a single-use token and the logs may be widely readable.
    this.logger.info("mail sent", { to: message.to, subject: message.subject, messageId: info.messageId });
  }
}
