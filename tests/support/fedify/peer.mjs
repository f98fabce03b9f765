// A real ActivityPub peer for tests/federation: a Fedify 2.3.6 server on loopback with
// one actor, "alice", whose inbox Fedify itself guards (it verifies every HTTP Signature
// and refuses what does not verify). The test drives it through /control:
//   POST /control/follow   {"actor": URL}  alice sends a signed Follow to that actor
//   POST /control/unfollow {"actor": URL}  alice sends a signed Undo of that Follow
//   GET  /control/received                 what reached alice's inbox and verified, and
//                                          how many inbox requests Fedify refused
// Run: node peer.mjs PORT  (prints "listening" once it listens)
import http from "node:http";
import {
  createFederation,
  generateCryptoKeyPair,
  MemoryKvStore,
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

const port = Number(process.argv[2]);
const origin = `http://127.0.0.1:${port}`;
const keys = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
const received = [];
let refused = 0;
const follows = new Map();

const federation = createFederation({
  kv: new MemoryKvStore(),
  allowPrivateAddress: true, // the anonbox under test listens on 127.0.0.1
  firstKnock: "draft-cavage-http-signatures-12", // as Mastodon and Misskey sign
});

federation
  .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (identifier !== "alice") return null;
    const pairs = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      name: "Alice (Fedify peer)",
      inbox: ctx.getInboxUri(identifier),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      publicKey: pairs[0].cryptographicKey,
    });
  })
  .setKeyPairsDispatcher(async (_ctx, identifier) =>
    identifier === "alice" ? [keys] : []
  );

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
    });
  };
}

federation
  .setInboxListeners("/users/{identifier}/inbox", "/inbox")
  .on(Accept, record("Accept"))
  .on(Create, record("Create"))
  .on(Delete, record("Delete"))
  .on(Update, record("Update"));

async function control(request, body) {
  const url = new URL(request.url, origin);
  const ctx = federation.createContext(new URL(origin), undefined);
  if (request.method === "GET" && url.pathname === "/control/received") {
    return { received, refused };
  }
  const { actor } = JSON.parse(body || "{}");
  const target = await ctx.lookupObject(actor);
  if (target === null) throw new Error(`cannot look up ${actor}`);
  const me = ctx.getActorUri("alice");
  if (url.pathname === "/control/follow") {
    const follow = new Follow({
      id: new URL(`${origin}/follows/${crypto.randomUUID()}`),
      actor: me,
      object: target.id,
    });
    follows.set(actor, follow);
    await ctx.sendActivity({ identifier: "alice" }, target, follow, { immediate: true });
    return { sent: follow.id.href };
  }
  if (url.pathname === "/control/unfollow") {
    const follow = follows.get(actor);
    const undo = new Undo({
      id: new URL(`${origin}/undos/${crypto.randomUUID()}`),
      actor: me,
      object: follow,
    });
    await ctx.sendActivity({ identifier: "alice" }, target, undo, { immediate: true });
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
    const request = new Request(new URL(req.url, origin), {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) =>
        Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]]
      ),
      body: ["GET", "HEAD"].includes(req.method) ? undefined : body,
    });
    const response = await federation.fetch(request, { contextData: undefined });
    if (req.method === "POST" && req.url.includes("inbox") && response.status >= 400) {
      refused += 1;
    }
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (error) {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(String(error?.stack ?? error));
  }
});

server.listen(port, "127.0.0.1", () => console.log("listening"));
