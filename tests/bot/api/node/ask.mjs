// Asks for a sign-off through the HTTP API with Node's built-in fetch, long-polls for the
// decision and reports the approved action done. One JSON line per step on stdout.
const base = process.env.SIGNOFF_URL + "/api/v1";
const headers = {
  Authorization: `Bearer ${process.env.SIGNOFF_TOKEN}`,
  "Content-Type": "application/json",
};

async function call(method, path, body) {
  const answer = await fetch(base + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: answer.status, body: await answer.json() };
}

const made = await call("POST", "/requests", {
  capability: "deploys", question: "Deploy from Node?", key: "node-1",
  request: { service: "api", from: "node" },
  files: [{ filename: "plan.txt", content_base64: Buffer.from("+ 1 change\n").toString("base64") }],
});
console.log(JSON.stringify({ step: "asked", ...made }));
let polled;
do {
  polled = await call("GET", `/requests/${made.body.id}?wait=20`);
} while (polled.status === 200 && polled.body.status === "needs_approval");
console.log(JSON.stringify({ step: "decided", ...polled }));
if (polled.body.status === "approved") {
  const done = await call("POST", `/requests/${made.body.id}/done`, { result: { deployed: true } });
  console.log(JSON.stringify({ step: "done", ...done }));
}
