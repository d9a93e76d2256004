import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../logger";
import { MAIL_FROM, type Mailer, type MailMessage } from "./mailer";

/** Writes each message as an RFC 5322 `.eml` file; the default when no SMTP server is configured. */
export class OutboxMailer implements Mailer {
  readonly kind = "outbox" as const;

  constructor(
    private readonly directory: string,
    private readonly logger: Logger,
  ) {}

  async send(message: MailMessage): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    const id = `${Date.now()}-${crypto.randomUUID()}`;
    const file = join(this.directory, `${id}.eml`);
    const eml = [
      `From: ${MAIL_FROM}`,
      `To: ${headerSafe(message.to)}`,
      `Subject: ${headerSafe(message.subject)}`,
      `Date: ${new Date().toUTCString()}`,
      `Message-ID: <${id}@localhost>`,
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
      "Content-Transfer-Encoding: 8bit",
      "",
      message.text,
      "",
    ].join("\r\n");
    await writeFile(file, eml, { mode: 0o600 });
    // Without SMTP the log is how a local operator finds the link, so it is logged here on purpose. The
    // addressee is not: an e-mail address is personal data, and the file beside the link names it.
    this.logger.info("mail written to outbox", {
      subject: message.subject,
      file,
      link: message.actionLink,
    });
  }
}

const headerSafe = (value: string): string => value.replace(/[\r\n]+/g, " ");
