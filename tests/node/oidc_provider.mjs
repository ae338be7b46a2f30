// A real, certified OpenID provider (the npm package `oidc-provider`) for the OAuth interop
// test (tests/tests/oauth_interop.rs). Configured as the MCP authorization spec expects of an
// authorization server: RFC 8414 / OpenID discovery, dynamic client registration (RFC 7591),
// PKCE, resource indicators (RFC 8707) with JWT access tokens whose audience is the resource.
//
// Nothing here signs what a test asks: tokens come out of the provider's own authorization
// code flow. The only shortcut is the interaction (login and consent pages): it is completed
// automatically, as the account named by the request's `login_hint` (default `alice`), with
// every scope the client asked for granted, since no person is there to click.
//
// Usage: node oidc_provider.mjs PROVIDER_DIR PORT RESOURCE KEYS_FILE
//   PROVIDER_DIR  where `npm install oidc-provider` put node_modules
//   RESOURCE      the MCP server's canonical URI (the audience of its tokens)
//   KEYS_FILE     JSON {"keys": [private JWKs]}; the first signs (a rotation restarts the
//                 provider with a new first key, the old one still published)
// Prints `listening on http://127.0.0.1:PORT` to stderr when ready. `node oidc_provider.mjs keygen KID`
// prints a new private P-256 JWK (ES256) with that kid instead.
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import path from 'node:path';

if (process.argv[2] === 'keygen') {
  const { generateKeyPairSync } = await import('node:crypto');
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: process.argv[3], alg: 'ES256', use: 'sig' };
  console.log(JSON.stringify(jwk));
  process.exit(0);
}

const [dir, port, resource, keysFile] = process.argv.slice(2);
const { default: Provider, errors } = await import(
  pathToFileURL(path.join(dir, 'node_modules', 'oidc-provider', 'lib', 'index.js')).href
);
const issuer = `http://127.0.0.1:${port}`;
const jwks = JSON.parse(readFileSync(keysFile, 'utf8'));
const RESOURCE_SCOPES = 'notes:read notes:write';

const provider = new Provider(issuer, {
  jwks,
  clients: [],
  clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code', 'refresh_token'] },
  // the resource's scopes too: dynamic registration accepts only scopes listed here
  scopes: ['openid', 'offline_access', 'notes:read', 'notes:write'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return {
          scope: RESOURCE_SCOPES,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
});

// A client's registered `scope` is taken as advisory, as many authorization servers do: the
// MCP client registers with the scopes of its first challenge and later steps up to more on
// the same registration (SEP-2350), which oidc-provider would refuse for a client whose
// registration names scopes. So the registration is stored without them.
provider.use(async (ctx, next) => {
  await next();
  if (ctx.method === 'POST' && ctx.path === '/reg' && ctx.status === 201) {
    const adapter = provider.Client.adapter;
    const stored = await adapter.find(ctx.body.client_id);
    if (stored && stored.scope) {
      delete stored.scope;
      await adapter.upsert(ctx.body.client_id, stored);
    }
  }
});

// The automatic interaction: login as login_hint, consent to what was asked.
provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith('/interaction/')) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: String(params.login_hint || 'alice') } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
});

provider.listen(Number(port), '127.0.0.1', () => {
  console.error(`listening on ${issuer}`);
});
