/**
 * The standing the legacy chart endpoint (`/superset/explore_json/`) needs. Its view is guarded by
 * Flask-AppBuilder's `has_access_api`, which reads Flask-Login's `current_user`: a session cookie
 * from a sign-in through Superset's `/login/` form, never the API's JWT (answered 401 "Access is
 * Denied"). So, on the first legacy call: GET /login/ (the page's hidden `csrf_token`, and the
 * `session` cookie that token belongs to), then POST /login/ with username, password and that
 * token, form-urlencoded, as the page's own form does; a redirect away from /login/ means signed
 * in. The cookies live in a jar of their own, sent on legacy calls only; the password and the
 * cookie are never logged.
 *
 * Only database and LDAP accounts sign in through that form (FAB's AuthDBView/AuthLDAPView); a
 * Superset signing people in through OAuth, OpenID, SAML or a proxy's REMOTE_USER has none, and
 * the sign-in fails with SupersetLegacySignInError (the chart check: not verifiable, with why).
 */
import { Parser } from 'htmlparser2';
import { SupersetLegacySignInError } from '../errors.ts';
import type { SupersetConnection } from '../types.ts';
import { unavailableFromStatus } from './answers.ts';
import { CookieJar } from './cookies.ts';
import type { ClientLogger } from './options.ts';
import type { CallSpec, WireResponse } from './wire.ts';

const LOGIN = '/login/';

/** Flask-AppBuilder's AUTH_TYPE values (flask_appbuilder/const.py) whose /login/ takes no password. */
const SSO_AUTH_TYPES: Record<number, string> = { 0: 'OpenID', 3: "a proxy's REMOTE_USER header", 4: 'OAuth', 5: 'SAML' };

/** The login page is parsed up to this size (Superset's page carries its bootstrap data). */
const MAX_PAGE_BYTES = 4 * 1024 * 1024;

/** What the sign-in reads of the login page. */
export interface LoginPage {
  csrfToken?: string;
  /** AUTH_TYPE from Superset's bootstrap data (`common.conf.AUTH_TYPE`), when the page has it. */
  authType?: number;
}

/** The page's hidden csrf_token input and the AUTH_TYPE its bootstrap data names, read by an HTML parser. */
export function readLoginPage(html: string): LoginPage {
  const page: LoginPage = {};
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'input' && attribs.name === 'csrf_token' && page.csrfToken === undefined && attribs.value)
          page.csrfToken = attribs.value;
        const bootstrap = attribs['data-bootstrap'];
        if (bootstrap && page.authType === undefined) page.authType = authTypeOf(bootstrap);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return page;
}

function authTypeOf(bootstrap: string): number | undefined {
  try {
    const data = JSON.parse(bootstrap) as { common?: { conf?: { AUTH_TYPE?: unknown } } };
    const t = data.common?.conf?.AUTH_TYPE;
    return typeof t === 'number' ? t : undefined;
  } catch {
    // expected: a page without the bootstrap data says nothing of the auth type.
    return undefined;
  }
}

/** What the legacy session needs of the transport: one raw exchange (a gateway's answer retried). */
export interface LegacyWire {
  exchange(spec: CallSpec): Promise<WireResponse>;
}

export class LegacySession {
  /** The signed-in session's cookies, sent on legacy calls only. */
  readonly cookies = new CookieJar();
  private signedIn = false;
  /** Bumped at each sign-in, so calls refused by the same session sign in again only once. */
  private generation = 0;
  private flight?: Promise<void>;
  /** Why this Superset cannot be signed in through its form: kept, so the next chart does not ask again. */
  private impossible?: SupersetLegacySignInError;
  private readonly conn: SupersetConnection;
  private readonly host: string;
  private readonly wire: LegacyWire;
  private readonly logger?: ClientLogger;

  constructor(conn: SupersetConnection, host: string, wire: LegacyWire, logger?: ClientLogger) {
    this.conn = conn;
    this.host = host;
    this.wire = wire;
    this.logger = logger;
  }

  /** Signed in (once; concurrent callers share one sign-in); the generation of that session. */
  async ensure(): Promise<number> {
    if (this.impossible) throw this.impossible;
    if (!this.signedIn) {
      this.flight ??= this.signIn()
        .catch((err: unknown) => {
          if (err instanceof SupersetLegacySignInError) this.impossible = err;
          throw err;
        })
        .finally(() => (this.flight = undefined));
      await this.flight;
    }
    return this.generation;
  }

  /** The session of `generation` was refused (expired, server restarted): sign in anew, unless another call already did. */
  async refused(generation: number): Promise<void> {
    if (generation === this.generation && this.signedIn) this.signedIn = false;
    await this.ensure();
  }

  private async signIn(): Promise<void> {
    this.cookies.clear();
    const page = await this.wire.exchange({
      method: 'GET',
      path: LOGIN,
      anonymous: true,
      accept: 'text/html',
      cookies: this.cookies,
      maxBytes: MAX_PAGE_BYTES,
    });
    const get = { method: 'GET', path: LOGIN, upstreamStatus: page.status };
    if (page.status >= 500) throw unavailableFromStatus(this.host, page, get);
    if (page.status !== 200)
      throw new SupersetLegacySignInError(
        get,
        `Superset at ${this.host} has no login page to sign in through (GET /login/ answered ${page.status})`,
      );
    const { csrfToken, authType } = readLoginPage(page.body.toString('utf8'));
    const sso = authType !== undefined ? SSO_AUTH_TYPES[authType] : undefined;
    if (sso)
      throw new SupersetLegacySignInError(
        get,
        `Superset at ${this.host} signs people in through ${sso} only, so there is no login form to sign in through`,
      );
    const form = new URLSearchParams({
      username: this.conn.username,
      password: this.conn.password,
      ...(csrfToken ? { csrf_token: csrfToken } : {}),
    });
    const res = await this.wire.exchange({
      method: 'POST',
      path: LOGIN,
      anonymous: true,
      accept: 'text/html',
      urlencoded: form,
      cookies: this.cookies,
      maxBytes: MAX_PAGE_BYTES,
    });
    const post = { method: 'POST', path: LOGIN, upstreamStatus: res.status };
    if (res.status >= 500) throw unavailableFromStatus(this.host, res, post);
    if (!(res.status >= 300 && res.status < 400) || leadsToLogin(String(res.headers.location ?? ''))) {
      const why =
        res.status === 404 || res.status === 405
          ? 'has no login form to sign in through'
          : "did not accept the environment's credentials on its login form";
      throw new SupersetLegacySignInError(
        post,
        `Superset at ${this.host} ${why} (POST /login/ answered ${res.status}${csrfToken ? '' : ', and its login page had no csrf_token'})`,
      );
    }
    this.signedIn = true;
    this.generation++;
    this.logger?.debug({ superset: this.host }, 'superset form sign-in');
  }
}

/** A Location that sends the caller (back) to the login page. */
export function leadsToLogin(location: string): boolean {
  try {
    return new URL(location, 'http://x/').pathname.replace(/\/+$/, '').endsWith('/login');
  } catch {
    // expected: not a URL: not the login page.
    return false;
  }
}
