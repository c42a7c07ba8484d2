// A worker loop in Node: claims tasks of a capability through the HTTP API until none is
// left; parks a new one at a question (after a heartbeat and a saved state) and completes
// one a person approved. Also proves a stale claim token is refused. JSON lines on stdout.
const base = process.env.SIGNOFF_URL + "/api/v1";
const capability = process.argv[2];
const worker = "node-worker";
const headers = {
  Authorization: `Bearer ${process.env.SIGNOFF_TOKEN}`,
  "Content-Type": "application/json",
};

async function call(path, body) {
  const answer = await fetch(base + path, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await answer.text();
  return { status: answer.status, body: text ? JSON.parse(text) : null };
}

for (;;) {
  const claimed = await call("/work/claim", { capability, worker, lease: 60 });
  if (claimed.status === 204) break;
  if (claimed.status !== 200) throw new Error(`claim: ${JSON.stringify(claimed)}`);
  const task = claimed.body;
  const fence = { worker, claim: task.claim };
  const stale = await call(`/tasks/${task.id}/complete`,
                           { worker, claim: "00000000-0000-0000-0000-000000000000" });
  console.log(JSON.stringify({ step: "stale", id: task.id, ...stale }));
  const beat = await call(`/tasks/${task.id}/heartbeat`, { ...fence, lease: 120 });
  if (beat.status !== 200) throw new Error(`heartbeat: ${JSON.stringify(beat)}`);
  if (task.approval && task.approval.decision === "approved") {
    const done = await call(`/tasks/${task.id}/complete`,
                            { ...fence, result: { sent: task.payload.n } });
    console.log(JSON.stringify({ step: "completed", id: task.id, ...done }));
    continue;
  }
  const saved = await call(`/tasks/${task.id}/state`, { ...fence, state: { drafted: true } });
  if (saved.status !== 200) throw new Error(`state: ${JSON.stringify(saved)}`);
  const parked = await call(`/tasks/${task.id}/park`, {
    ...fence, question: `Send mail ${task.payload.n}?`, request: { n: task.payload.n },
  });
  console.log(JSON.stringify({ step: "parked", id: task.id, ...parked }));
}
console.log(JSON.stringify({ step: "idle" }));
