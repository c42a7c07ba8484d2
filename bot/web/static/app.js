// Signoff's web inbox: decide without a reload, and keep the inbox in step with every
// decision made anywhere (server-sent events; polling every 2 s while they are down).
"use strict";

(function () {
  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
  const WORDS = { approved: "Approved", revised: "Revise requested", skipped: "Skipped",
                  expired: "Expired" };

  function person(by) {
    if (!by) return "someone";
    if (by.startsWith("telegram:")) return by.split(":").slice(2).join(":") || by;
    if (by.startsWith("web:")) return by.slice(4) || by;
    return by;
  }

  function utc(iso) {
    if (!iso) return "";
    const d = new Date(iso);
    return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }

  function markDecided(card, state) {
    const box = card.querySelector(".decide");
    if (!box || box.dataset.state === "closed") return;
    box.dataset.state = "closed";
    const line = document.createElement("p");
    line.className = "decided decided-" + (state.decision || "closed");
    if (state.decision) {
      let text = (WORDS[state.decision] || state.decision);
      if (state.decision !== "expired") text += " by " + person(state.decided_by);
      line.textContent = text + " at " + utc(state.decided_at) + ".";
      if (state.note) {
        const note = document.createElement("span");
        note.className = "note";
        note.textContent = " Note: " + state.note;
        line.appendChild(note);
      }
    } else if (state.task_status === "needs_approval") {
      line.textContent = "Superseded: the task asked a newer question.";
    } else {
      line.textContent = "Closed: the task is " + (state.task_status || "no longer waiting")
        .replace("_", " ") + ".";
    }
    box.replaceChildren(line);
    card.classList.add("closed");
  }

  function showProgress(card, text) {
    let line = card.querySelector(".four-eyes");
    if (!line) {
      line = document.createElement("p");
      line.className = "four-eyes";
      card.querySelector(".decide").before(line);
    }
    line.textContent = text;  // text, never HTML: names come from the database
  }

  async function getJson(url) {
    const res = await fetch(url, { headers: { Accept: "application/json" },
                                   credentials: "same-origin" });
    if (res.status === 401) { window.location.assign("/login?next=/"); }
    if (!res.ok) throw new Error(url + ": " + res.status);
    return res.json();
  }

  async function addCard(id, list) {
    const res = await fetch("/approvals/" + id + "/card", { credentials: "same-origin" });
    if (!res.ok || document.getElementById("approval-" + id)) return;
    const tpl = document.createElement("template");
    tpl.innerHTML = (await res.text()).trim();  // rendered and escaped by the server
    const card = tpl.content.firstElementChild;
    if (!card) return;
    const later = Array.from(list.children).find(
      (el) => el.dataset.created > card.dataset.created);
    list.insertBefore(card, later || null);
  }

  let running = false, again = false;
  async function reconcile() {
    if (running) { again = true; return; }
    running = true;
    try {
      do {
        again = false;
        const list = document.getElementById("cards");
        const inbox = await getJson("/inbox.json");
        const open = new Set(inbox.approvals.map((a) => String(a.id)));
        for (const card of list.querySelectorAll("article.card")) {
          const id = card.dataset.approval;
          if (!open.has(id) && !card.classList.contains("closed")) {
            markDecided(card, await getJson("/approvals/" + id + ".json"));
          }
        }
        for (const a of inbox.approvals) {
          const shown = document.getElementById("approval-" + a.id);
          if (!shown) await addCard(a.id, list);
          // Four eyes: an approve made elsewhere (Telegram, the CLI, another page).
          else if (a.progress && !shown.classList.contains("closed")) showProgress(shown, a.progress);
        }
        document.getElementById("open-count").textContent = inbox.open;
        document.getElementById("empty").hidden = list.children.length > 0;
      } while (again);
    } catch (err) {
      console.warn("signoff: refresh failed", err);
    } finally {
      running = false;
    }
  }

  // The server's answer in words, whatever it is: JSON from the decide handler, or a
  // refusal from before it (an ended session, a proxy's error page).
  async function answerOf(res) {
    if ((res.headers.get("Content-Type") || "").includes("application/json")) {
      return res.json();
    }
    if (res.status === 401 || res.status === 403) {
      return { ok: false, error: "you were signed out: reload the page and sign in; " +
                                 "nothing was decided" };
    }
    return { ok: false, error: "Not decided: the server answered " + res.status + "." };
  }

  async function decide(form, submitter) {
    const card = form.closest("article.card");
    const error = form.querySelector(".error");
    const data = new FormData(form);
    data.set("decision", submitter.value);
    error.hidden = true;
    for (const b of form.querySelectorAll("button")) b.disabled = true;
    try {
      const res = await fetch(form.action, {
        method: "POST", body: data, credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRF-Token": csrf() } });
      const answer = await answerOf(res);
      if (answer.ok && !answer.decision && answer.progress) {
        showProgress(card, answer.progress);  // four-eyes: counted, waiting for another
        return;
      }
      if (answer.ok) { markDecided(card, answer); reconcile(); return; }
      error.textContent = answer.error || "Not decided.";
      error.hidden = false;
      if (res.status === 409) reconcile();
    } catch (err) {
      error.textContent = "Not decided: " + err.message;
      error.hidden = false;
    } finally {
      for (const b of form.querySelectorAll("button")) b.disabled = false;
    }
  }

  function liveInbox() {
    document.addEventListener("submit", (ev) => {
      const form = ev.target;
      if (!form.classList || !form.classList.contains("decision")) return;
      ev.preventDefault();
      decide(form, ev.submitter || form.querySelector("button[value=approve]"));
    });
    let poll = null;
    const startPolling = () => { if (!poll) poll = setInterval(reconcile, 2000); };
    const stopPolling = () => { if (poll) { clearInterval(poll); poll = null; } };
    if (!window.EventSource) { startPolling(); return; }
    const events = new EventSource("/events");
    events.addEventListener("hello", () => { stopPolling(); reconcile(); });
    events.addEventListener("changed", () => reconcile());
    events.onerror = () => startPolling();
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (document.body.dataset.page === "inbox" && document.getElementById("cards")) {
      liveInbox();
      document.body.dataset.live = "ready";
    }
  });
})();
