// A Web Worker that solves an ALTCHA (version 1) proof-of-work challenge: find the number
// n in [0, maxnumber] whose SHA-256 of salt + n is the challenge. The send page starts it
// when a link under a flood asks for a proof (safety/flood.py); it posts back the
// solution, base64 as the X-Altcha header wants it, or null when there is none.
"use strict";

var BATCH = 256; // digests in flight at once: the browser's crypto runs them in parallel

function same(digest, expected) {
  var bytes = new Uint8Array(digest);
  for (var i = 0; i < bytes.length; i++) {
    if (bytes[i] !== expected[i]) return false;
  }
  return true;
}

function bytesOf(hex) {
  var out = new Uint8Array(hex.length / 2);
  for (var i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

async function solve(challenge) {
  var encoder = new TextEncoder();
  var expected = bytesOf(challenge.challenge);
  for (var start = 0; start <= challenge.maxnumber; start += BATCH) {
    var end = Math.min(start + BATCH - 1, challenge.maxnumber);
    var digests = [];
    for (var n = start; n <= end; n++) {
      digests.push(crypto.subtle.digest("SHA-256", encoder.encode(challenge.salt + n)));
    }
    var done = await Promise.all(digests);
    for (var i = 0; i < done.length; i++) {
      if (same(done[i], expected)) return start + i;
    }
  }
  return null;
}

self.onmessage = function (event) {
  var challenge = event.data;
  solve(challenge).then(
    function (number) {
      if (number === null) {
        self.postMessage(null);
        return;
      }
      self.postMessage(btoa(JSON.stringify({
        algorithm: challenge.algorithm,
        challenge: challenge.challenge,
        number: number,
        salt: challenge.salt,
        signature: challenge.signature,
      })));
    },
    function () { self.postMessage(null); }
  );
};
