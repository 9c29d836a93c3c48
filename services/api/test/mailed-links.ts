import { linksIn, type ReceivedMail } from '@svc/test-support';
import type { Express } from 'express';
import request from 'supertest';

/**
 * Every link the service mailed, opened as the person opens it (GET, on PUBLIC_BASE_URL's host):
 * what does not answer 2xx or 3xx, or is not on PUBLIC_BASE_URL at all. Opening a link changes
 * nothing (the pages act on their form's post), so this may run over any test's mails; the
 * harnesses run it over every mail they captured when they close. With WEB_PAGES=off the pages
 * are a web client's and nothing is checked.
 */
export async function deadMailedLinks(app: Express, publicBaseUrl: string, mails: readonly ReceivedMail[]): Promise<string[]> {
  const base = new URL(publicBaseUrl);
  const dead: string[] = [];
  const seen = new Set<string>();
  for (const mail of mails) {
    for (const link of linksIn(mail.text)) {
      if (seen.has(link.href)) continue;
      seen.add(link.href);
      if (link.origin !== base.origin) {
        dead.push(`${link.href} is not on PUBLIC_BASE_URL (in "${mail.subject}")`);
        continue;
      }
      const res = await request(app).get(`${link.pathname}${link.search}`).set('Host', link.host);
      if (res.status >= 400) dead.push(`GET ${link.pathname} answers ${res.status} (in "${mail.subject}")`);
    }
  }
  return dead;
}
