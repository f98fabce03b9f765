// A real ActivityPub peer for tests/federation: a Fedify 2.3.6 server on loopback with
// one actor, "alice", whose inbox Fedify itself guards (it verifies every HTTP Signature
// and refuses what does not verify). The test drives it through /control:
//   POST /control/follow   {"actor": URL}  alice sends a signed Follow to that actor
//   POST /control/unfollow {"actor": URL}  alice sends a signed Undo of that Follow
//   GET  /control/received                 what reached alice's inbox and verified, and
//                                          how many inbox requests Fedify refused; each
//                                          inbox POST's signature standard and answer
//                                          ("knocks"); how often alice's actor was read
//   POST /control/follow {"actor", "spec": "rfc9421"}  the Follow signed with RFC 9421
//                                          only (Fedify's first knock; it is accepted)
//   POST /control/sign {"url", "body", "spec"}  the headers that sign a POST of body to
//                                          url as alice (Fedify's signRequest), unsent
//   POST /control/rotate                   alice gets a new key pair (same key id)
//   POST /control/cache {"value"}          alice's actor is served with this
//                                          Cache-Control (null: Fedify's own)
//   POST /control/follow {"actor", "as": "bob"}  (and unfollow) bob follows: a second
//                                          follower on this server (one shared inbox)
//   POST /control/outage {"down": true}    the server is down: 503 to all but /control/
//   POST /control/profile {"url"}          the actor at url as Fedify's lookupObject and
//                                          its vocabulary read it (discoverable, indexable,
//                                          manuallyApprovesFollowers, published, icon,
//                                          endpoints.sharedInbox, featured), null where absent
//   POST /control/follow {"actor", "shared": true}  (and unfollow) sent to the actor's
//                                          endpoints.sharedInbox (preferSharedInbox)
//   POST /control/lookup {"url": URL}      Fedify's lookupObject(url), as a person pasting
//                                          the address into a search: {"id", "type"} of
//                                          what it found ("type" the vocabulary's URI), or
//                                          {"id": null} when it found nothing
//   POST /control/note {"url": URL}        the Note at url as Fedify's lookupObject (an
//                                          unsigned fetch, as anyone's) and its vocabulary
//                                          read it (noted() below), or {"found": false}
//   POST /control/traverse {"url": URL}    the collection at url as Fedify reads it:
//                                          totalItems, and every item traverseCollection
//                                          gives (following first and each next), in
//                                          order: {"id", "type", "note": noted(object)}
// Each recorded activity also says what its object's vocabulary read: "sensitive",
// "languages" (of contentMap), "to", "cc", "url"; and the activity's own addressing,
// "activity_to" and "activity_cc".
// ("sent": each POST the peer made, with its signature standard and the answer.)
// Run: node peer.mjs PORT [--only-rfc9421]  (prints "listening" once it listens); with
// --only-rfc9421 its inboxes refuse (401) what is not signed with RFC 9421, as a server
// that checks only RFC 9421 would, and so does alice's actor (a GET of it not signed with
// RFC 9421 is a 401, as in "authorized fetch"; "fetch_knocks" records them).
import http from "node:http";
import {
  createFederation,
  generateCryptoKeyPair,
  MemoryKvStore,
  signRequest,
} from "@fedify/fedify";
import {
  Accept,
  Create,
  Delete,
  Endpoints,
  Follow,
  Person,
  Undo,
  Update,
} from "@fedify/fedify/vocab";
import { getDocumentLoader } from "@fedify/vocab-runtime";

// What /control/note and /control/traverse read with: each fetch anew (Fedify's own
// loader keeps what it read for minutes, and these read a document again after a change).
const freshLoader = getDocumentLoader({ allowPrivateAddress: true });

const port = Number(process.argv[2]);
const origin = `http://127.0.0.1:${port}`;
const onlyRfc9421 = process.argv.includes("--only-rfc9421");
let keys = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
const bobKeys = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5"); // a second follower here
let down = false; // POST /control/outage: every request but /control/ answers 503
const received = [];
let refused = 0;
const knocks = [];
let actorFetches = 0;
const fetchKnocks = []; // with --only-rfc9421: each GET of alice's actor, as knocks
let actorCacheControl = null;
const sent = []; // each POST the peer sends: its signature standard and the answer's status
const follows = new Map();

function standardOf(headers) {
  return headers.get("signature-input") ? "rfc9421" : "cavage";
}

function keyIdOf(headers) {
  const found = /keyid="([^"]*)"/i.exec(
    headers.get("signature-input") ?? headers.get("signature") ?? "",
  );
  return found ? found[1] : null;
}

const originalFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await originalFetch(request);
  if (request.method === "POST") {
    sent.push({ url: request.url, standard: standardOf(request.headers), status: response.status });
  }
  return response;
};

function makeFederation(firstKnock) {
  const made = createFederation({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true, // the anonbox under test listens on 127.0.0.1
    firstKnock,
  });
  made
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (identifier !== "alice" && identifier !== "bob") return null;
      const pairs = await ctx.getActorKeyPairs(identifier);
      return new Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        name: identifier === "alice" ? "Alice (Fedify peer)" : "Bob (Fedify peer)",
        inbox: ctx.getInboxUri(identifier),
        endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
        publicKey: pairs[0].cryptographicKey,
      });
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) =>
      identifier === "alice" ? [keys] : identifier === "bob" ? [bobKeys] : []
    );
  made
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Accept, record("Accept"))
    .on(Create, record("Create"))
    .on(Delete, record("Delete"))
    .on(Update, record("Update"));
  return made;
}

async function attachments(object) {
  const found = [];
  if (!object?.getAttachments) return found;
  for await (const a of object.getAttachments()) {
    found.push({ url: a.url?.href ?? null, name: a.name?.toString() ?? null });
  }
  return found;
}

function record(kind) {
  return async (ctx, activity) => {
    const object = await activity.getObject({ crossOrigin: "trust" }).catch(() => null);
    received.push({
      type: kind,
      id: activity.id?.href ?? null,
      actor: activity.actorId?.href ?? null,
      object_id: object?.id?.href ?? activity.objectId?.href ?? null,
      object_type: object?.constructor?.typeId?.href ?? null,
      content: object?.content?.toString() ?? null,
      summary: object?.summary?.toString() ?? null,
      name: object?.name?.toString() ?? null,
      attachments: await attachments(object),
      recipient: ctx.recipient ?? null, // null: the shared inbox
      ...(await noted(object)),
      activity_to: (activity.toIds ?? []).map((u) => u.href),
      activity_cc: (activity.ccIds ?? []).map((u) => u.href),
      // An actor's (an Update of one): what its profile says.
      discoverable: object?.discoverable ?? null,
      icon_url: (await object?.getIcon?.().catch(() => null))?.url?.href ?? null,
    });
  };
}

// A Note as Fedify's vocabulary reads it: its warning (summary, sensitive), the
// languages of its content (contentMap), its addressing and its url.
async function noted(object) {
  if (!object) return {};
  return {
    sensitive: object.sensitive ?? null,
    languages: (object.contents ?? [])
      .filter((c) => c?.locale)
      .map((c) => c.locale.baseName),
    contents: (object.contents ?? []).map((c) => c.toString()),
    to: (object.toIds ?? []).map((u) => u.href),
    cc: (object.ccIds ?? []).map((u) => u.href),
    url: object.url?.href ?? null,
  };
}

// A collection as Fedify's traverseCollection walks it (first, then each next).
async function traversed(ctx, address) {
  const fresh = { documentLoader: freshLoader };
  const collection = await ctx.lookupObject(address, fresh);
  if (collection === null) return { found: false };
  const items = [];
  for await (const item of ctx.traverseCollection(collection, fresh)) {
    const object = await item.getObject?.({ crossOrigin: "trust" }).catch(() => null);
    items.push({
      id: item.id?.href ?? null,
      type: item.constructor?.typeId?.href ?? null,
      note: { id: object?.id?.href ?? null, ...(await noted(object)) },
    });
  }
  return {
    found: true,
    type: collection.constructor?.typeId?.href ?? null,
    total: collection.totalItems ?? null,
    items,
  };
}

// An actor as Fedify's parser reads it: only what its vocabulary objects say (a property
// whose term the document's @context does not define is read as absent, null).
async function profiled(ctx, address) {
  const found = await ctx.lookupObject(address);
  if (found === null) return { found: false };
  const icon = await found.getIcon?.().catch(() => null);
  return {
    found: true,
    id: found.id?.href ?? null,
    type: found.constructor?.typeId?.href ?? null,
    name: found.name?.toString() ?? null,
    summary: found.summary?.toString() ?? null,
    discoverable: found.discoverable ?? null,
    indexable: found.indexable ?? null,
    manually_approves_followers: found.manuallyApprovesFollowers ?? null,
    published: found.published?.toString() ?? null,
    icon_media_type: icon?.mediaType ?? null,
    icon_url: icon?.url?.href ?? null,
    shared_inbox: found.endpoints?.sharedInbox?.href ?? null,
    featured: found.featuredId?.href ?? null,
  };
}

// Inbound requests all go to the first; the second signs with RFC 9421 first.
const federation = makeFederation("draft-cavage-http-signatures-12"); // as Mastodon signs
const federation9421 = makeFederation("rfc9421");

async function control(request, body) {
  const url = new URL(request.url, origin);
  const ctx = federation.createContext(new URL(origin), undefined);
  if (request.method === "GET" && url.pathname === "/control/received") {
    return {
      received,
      refused,
      knocks,
      sent,
      actor_fetches: actorFetches,
      fetch_knocks: fetchKnocks,
    };
  }
  const given = JSON.parse(body || "{}");
  if (url.pathname === "/control/outage") {
    down = given.down === true;
    return { down };
  }
  if (url.pathname === "/control/cache") {
    actorCacheControl = given.value ?? null;
    return { cache_control: actorCacheControl };
  }
  if (url.pathname === "/control/rotate") {
    keys = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
    return { rotated: true };
  }
  if (url.pathname === "/control/sign") {
    const me = ctx.getActorUri("alice");
    const signed = await signRequest(
      new Request(given.url, {
        method: "POST",
        headers: { "content-type": "application/activity+json" },
        body: given.body,
      }),
      keys.privateKey,
      new URL(`${me.href}#main-key`),
      { spec: given.spec ?? "rfc9421" },
    );
    return { headers: Object.fromEntries(signed.headers) };
  }
  if (url.pathname === "/control/lookup") {
    const found = await ctx.lookupObject(given.url);
    return {
      id: found?.id?.href ?? null,
      type: found?.constructor?.typeId?.href ?? null,
    };
  }
  if (url.pathname === "/control/profile") {
    return await profiled(ctx, given.url);
  }
  if (url.pathname === "/control/note") {
    const found = await ctx.lookupObject(given.url, { documentLoader: freshLoader });
    if (found === null) return { found: false };
    return {
      found: true,
      id: found.id?.href ?? null,
      type: found.constructor?.typeId?.href ?? null,
      summary: found.summary?.toString() ?? null,
      ...(await noted(found)),
    };
  }
  if (url.pathname === "/control/traverse") {
    return await traversed(ctx, given.url);
  }
  const { actor } = given;
  const target = await ctx.lookupObject(actor);
  if (target === null) throw new Error(`cannot look up ${actor}`);
  const as = given.as ?? "alice"; // who follows: "alice" or "bob"
  const me = ctx.getActorUri(as);
  if (url.pathname === "/control/follow") {
    const sender = given.spec === "rfc9421"
      ? federation9421.createContext(new URL(origin), undefined)
      : ctx;
    const follow = new Follow({
      id: new URL(`${origin}/follows/${crypto.randomUUID()}`),
      actor: me,
      object: target.id,
    });
    follows.set(`${as} ${actor}`, follow);
    await sender.sendActivity({ identifier: as }, target, follow, {
      immediate: true,
      preferSharedInbox: given.shared === true,
    });
    return { sent: follow.id.href };
  }
  if (url.pathname === "/control/unfollow") {
    const follow = follows.get(`${as} ${actor}`);
    const undo = new Undo({
      id: new URL(`${origin}/undos/${crypto.randomUUID()}`),
      actor: me,
      object: follow,
    });
    await ctx.sendActivity({ identifier: as }, target, undo, {
      immediate: true,
      preferSharedInbox: given.shared === true,
    });
    return { sent: undo.id.href };
  }
  throw new Error(`no control ${url.pathname}`);
}

const server = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  try {
    if (req.url.startsWith("/control/")) {
      const answer = await control(req, body.toString());
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
      return;
    }
    if (down) {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("Down for maintenance");
      return;
    }
    const inboxPost = req.method === "POST" && req.url.includes("inbox");
    const given = new Headers(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const standard = standardOf(given);
    const keyId = keyIdOf(given);
    const actorGet = req.method === "GET" && req.url.startsWith("/users/alice");
    if (actorGet) actorFetches += 1;
    if (actorGet && onlyRfc9421) {
      // "Authorized fetch" that takes only RFC 9421: other GETs of the actor are refused.
      const status = standard === "rfc9421" ? 200 : 401;
      fetchKnocks.push({ path: req.url, standard, key_id: keyId, status });
      if (status === 401) {
        res.writeHead(401, { "content-type": "text/plain" });
        res.end("Only RFC 9421 HTTP Message Signatures are accepted here");
        return;
      }
    }
    if (inboxPost && onlyRfc9421 && standard !== "rfc9421") {
      knocks.push({ path: req.url, standard, key_id: keyId, status: 401 });
      res.writeHead(401, { "content-type": "text/plain" });
      res.end("Only RFC 9421 HTTP Message Signatures are accepted here");
      return;
    }
    const request = new Request(new URL(req.url, origin), {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) =>
        Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]]
      ),
      body: ["GET", "HEAD"].includes(req.method) ? undefined : body,
    });
    const response = await federation.fetch(request, { contextData: undefined });
    if (inboxPost) {
      knocks.push({ path: req.url, standard, key_id: keyId, status: response.status });
    }
    if (inboxPost && response.status >= 400) {
      refused += 1;
    }
    const answerHeaders = Object.fromEntries(response.headers);
    if (req.method === "GET" && req.url.startsWith("/users/alice") && actorCacheControl) {
      answerHeaders["cache-control"] = actorCacheControl;
    }
    res.writeHead(response.status, answerHeaders);
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (error) {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(String(error?.stack ?? error));
  }
});

server.listen(port, "127.0.0.1", () => console.log("listening"));
