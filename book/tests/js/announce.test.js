import assert from "node:assert/strict";
import { test } from "node:test";
import { ANNOUNCE_EVERY_MS, nextAnnouncement } from "../../theme/pipebook/announce.js";

test("a new state is announced at once", () => {
  const first = nextAnnouncement(null, { state: "queued", text: "Queued…", now: 0 });
  assert.deepEqual(first, { state: "queued", text: "Queued…", at: 0 });
  const running = nextAnnouncement(first, { state: "running", text: "Running for up to 3 s…", now: 10 });
  assert.equal(running.text, "Running for up to 3 s…");
  const done = nextAnnouncement(running, { state: "done", text: "Done: 1 GiB in 1 s.", now: 20 });
  assert.equal(done.state, "done");
});

test("progress in one state is announced at most once per interval", () => {
  let last = nextAnnouncement(null, { state: "running", text: "Running: 0.0 s", now: 0 });
  let said = 1;
  // 20 progress messages a second for 25 seconds.
  for (let t = 50; t <= 25000; t += 50) {
    const next = nextAnnouncement(last, { state: "running", text: `Running: ${(t / 1000).toFixed(2)} s`, now: t });
    if (next) {
      assert.ok(next.at - last.at >= ANNOUNCE_EVERY_MS, `${next.at} after ${last.at}`);
      last = next;
      said += 1;
    }
  }
  assert.equal(said, 3);
});

test("nothing new, or nothing at all, is not announced", () => {
  const last = { state: "done", text: "Done.", at: 0 };
  assert.equal(nextAnnouncement(last, { state: "done", text: "Done.", now: 60000 }), null);
  assert.equal(nextAnnouncement(null, { state: "idle", text: "  ", now: 0 }), null);
});
