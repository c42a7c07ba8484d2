// Signoff's web pages: decide without a reload (confirmations in the page, keys j/k, a/r/s
// and ?; a signed approve asks the person's passkey first), add a passkey on /account, keep
// the inbox in step with every decision made anywhere (server-sent events; polling every
// 2 s while they are down), and the Tasks page's selection.
"use strict";

(function () {
  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
  const WORDS = { approved: "Approved", revised: "Revise requested", skipped: "Skipped",
                  expired: "Expired" };
  const SIGNED_OUT = "you were signed out: reload the page and sign in; nothing was decided";
  // What each confirmation asks, and its button's name.
  const ASK = {
    approve: ["Approve this?", "Confirm approve"],
    revise: ["Send it back with this note?", "Confirm revise"],
    skip: ["Skip ends this task for good.", "Confirm skip"],
  };

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
      (card.querySelector("header") || card).appendChild(line);
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
        const after = list.dataset.after ? "?after=" + encodeURIComponent(list.dataset.after) : "";
        const inbox = await getJson("/inbox.json" + after);
        const open = new Set((inbox.open_ids || inbox.approvals.map((a) => a.id)).map(String));
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

  // Passkeys: the server's WebAuthn options (JSON) in, the browser's credential (JSON) out.
  async function postJson(url, data) {
    const res = await fetch(url, {
      method: "POST", body: data || new FormData(), credentials: "same-origin",
      headers: { Accept: "application/json", "X-CSRF-Token": csrf() } });
    const answer = await answerOf(res);
    if (!res.ok || answer.ok === false) throw new Error(answer.error || ("HTTP " + res.status));
    return answer;
  }

  async function signApprove(form) {
    // The decide form's own address names the approval (the inbox's card or the task page).
    const options = await postJson(form.action.replace(/\/decide$/, "/sign-options"));
    const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options);
    const credential = await navigator.credentials.get({ publicKey });
    return JSON.stringify(credential.toJSON());
  }

  async function addPasskey(form) {
    const error = form.querySelector(".error");
    error.hidden = true;
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const options = await postJson("/account/passkeys/options");
      const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options);
      const credential = await navigator.credentials.create({ publicKey });
      const data = new FormData();
      data.set("credential", JSON.stringify(credential.toJSON()));
      data.set("label", form.querySelector("input[name=label]").value);
      await postJson("/account/passkeys", data);
      window.location.assign("/account");
    } catch (err) {
      error.textContent = "No passkey added: " + err.message;
      error.hidden = false;
    } finally {
      button.disabled = false;
    }
  }

  // The server's answer in words, whatever it is: JSON from the decide handler, or a
  // refusal from before it (an ended session, a proxy's error page).
  async function answerOf(res) {
    if ((res.headers.get("Content-Type") || "").includes("application/json")) {
      return res.json();
    }
    if (res.status === 401 || res.status === 403) return { ok: false, error: SIGNED_OUT };
    return { ok: false, error: "Not decided: the server answered " + res.status + "." };
  }

  async function decide(form, submitter) {
    const card = form.closest("article.card, .decidable");
    const error = form.querySelector(".error");
    const data = new FormData(form);
    data.set("decision", submitter.value);
    error.hidden = true;
    for (const b of form.querySelectorAll("button")) b.disabled = true;
    try {
      if (form.dataset.signed && submitter.value === "approve") {
        data.set("assertion", await signApprove(form));
      }
      const res = await fetch(form.action, {
        method: "POST", body: data, credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRF-Token": csrf() } });
      const answer = await answerOf(res);
      if (answer.ok && !answer.decision && answer.progress) {
        showProgress(card, answer.progress);  // four-eyes: counted, waiting for another
        unconfirm(form);
        return;
      }
      if (answer.ok) {
        markDecided(card, answer);
        if (document.body.dataset.page === "inbox") reconcile();
        else window.location.reload();  // the task page: its status and history moved on
        return;
      }
      error.textContent = answer.error || "Not decided.";
      error.hidden = false;
      if (res.status === 409 && document.body.dataset.page === "inbox") reconcile();
    } catch (err) {
      error.textContent = "Not decided: " + err.message;
      error.hidden = false;
    } finally {
      for (const b of form.querySelectorAll("button")) b.disabled = false;
    }
  }

  // A confirmation in the card: the second button says what it will do.
  function ask(form, choice) {
    const confirm = form.querySelector("button.confirm");
    const [question, label] = ASK[choice];
    form.querySelector(".ask").textContent = question;
    form.querySelector(".ask").hidden = false;
    confirm.value = choice;
    confirm.textContent = label;
    confirm.className = "confirm " + (choice === "skip" ? "danger" : "primary");
    confirm.hidden = false;
    form.querySelector("button.keep").hidden = false;
    form.querySelector("button.skip").setAttribute("aria-expanded", String(choice === "skip"));
    if (choice === "revise" && !form.querySelector("textarea").value.trim()) {
      form.querySelector("textarea").focus();
    } else {
      confirm.focus();
    }
  }

  function unconfirm(form) {
    for (const el of form.querySelectorAll(".ask, button.confirm, button.keep")) el.hidden = true;
    const skip = form.querySelector("button.skip");
    if (skip) skip.setAttribute("aria-expanded", "false");
  }

  function decisions() {
    document.addEventListener("submit", (ev) => {
      const form = ev.target;
      if (!form.classList || !form.classList.contains("decision")) return;
      ev.preventDefault();
      decide(form, ev.submitter || form.querySelector("button[value=approve]"));
    });
    document.addEventListener("click", (ev) => {
      const button = ev.target.closest && ev.target.closest("form.decision button");
      if (!button) return;
      const form = button.closest("form");
      if (button.classList.contains("skip")) {
        if (button.getAttribute("aria-expanded") === "true") unconfirm(form);
        else ask(form, "skip");
      } else if (button.classList.contains("keep")) {
        unconfirm(form);
        button.closest(".decide").querySelector("button[value=approve]").focus();
      }
    });
  }

  function liveInbox() {
    let poll = null;
    const startPolling = () => { if (!poll) poll = setInterval(reconcile, 2000); };
    const stopPolling = () => { if (poll) { clearInterval(poll); poll = null; } };
    if (!window.EventSource) { startPolling(); return; }
    const events = new EventSource("/events");
    events.addEventListener("hello", () => { stopPolling(); reconcile(); });
    events.addEventListener("changed", () => reconcile());
    events.onerror = () => startPolling();
  }

  // Keys: j/k move between open cards, a/r/s ask to approve, revise, skip, ? shows them.
  function openCards() {
    return Array.from(document.querySelectorAll("article.card:not(.closed)"));
  }

  function current() {
    return document.querySelector("article.card.current:not(.closed)");
  }

  function move(step) {
    const cards = openCards();
    if (!cards.length) return;
    const at = cards.indexOf(current());
    const next = cards[Math.min(Math.max(at + step, 0), cards.length - 1)] || cards[0];
    for (const c of document.querySelectorAll("article.card.current")) c.classList.remove("current");
    next.classList.add("current");
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: "start" });
  }

  function keys() {
    const help = document.getElementById("keys");
    const toggleHelp = (show) => { if (help) help.hidden = !show; };
    const close = document.getElementById("keys-close");
    if (close) close.addEventListener("click", () => toggleHelp(false));
    document.addEventListener("keydown", (ev) => {
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const typing = ev.target.closest && ev.target.closest("input, textarea, select");
      if (ev.key === "Escape") {
        toggleHelp(false);
        for (const f of document.querySelectorAll("form.decision")) unconfirm(f);
        if (typing) ev.target.blur();
        return;
      }
      const form = typing && ev.target.closest("form.decision");
      const confirm = form && form.querySelector("button.confirm");
      if (confirm && !confirm.hidden && ev.key === "Enter" && !ev.shiftKey) {
        ev.preventDefault();  // the note is written: Enter again confirms
        confirm.focus();
        return;
      }
      if (typing) return;
      if (ev.key === "?") { toggleHelp(help && help.hidden); ev.preventDefault(); return; }
      if (ev.key === "j" || ev.key === "k") { move(ev.key === "j" ? 1 : -1); ev.preventDefault(); return; }
      const choice = { a: "approve", r: "revise", s: "skip" }[ev.key];
      if (!choice) return;
      let card = current();
      if (!card) { move(0); card = current(); }
      const target = card && card.querySelector("form.decision");
      if (!target) return;
      ev.preventDefault();
      ask(target, choice);
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const adding = document.getElementById("add-passkey");
    if (adding) {
      adding.addEventListener("submit", (ev) => { ev.preventDefault(); addPasskey(adding); });
      document.body.dataset.live = "ready";
    }
    if (document.querySelector("form.decision") || document.body.dataset.page === "inbox") {
      decisions();
    }
    if (document.body.dataset.page === "inbox" && document.getElementById("cards")) {
      keys();
      liveInbox();
      document.body.dataset.live = "ready";
    }
  });
})();

// The Tasks page: select all, and bulk Retry / Cancel confirmed in the page with the count.
(function () {
  const VERB = { retry: "Retry", cancel: "Cancel" };
  const plural = (n) => n.toLocaleString("en") + (n === 1 ? " task" : " tasks");

  function ask(form, text, action, n) {
    const line = form.querySelector(".bulk .ask");
    const confirm = form.querySelector(".bulk button.confirm");
    line.textContent = text;
    line.hidden = false;
    confirm.hidden = !n;
    form.querySelector(".bulk button.keep").hidden = false;
    if (n) {
      confirm.value = action;
      confirm.textContent = "Confirm " + action + " of " + plural(n);
      form.querySelector("input[name=expected]").value = String(n);
      confirm.focus();
    }
  }

  function unask(form) {
    for (const el of form.querySelectorAll(".bulk .ask, .bulk button.confirm, .bulk button.keep")) {
      el.hidden = true;
    }
  }

  async function matchingCount(form) {
    const query = new URLSearchParams();
    for (const el of form.querySelectorAll("input[type=hidden]")) {
      if (["capability", "status", "decided_by", "age", "q"].includes(el.name)) {
        query.set(el.name, el.value);
      }
    }
    const res = await fetch("/tasks/bulk/count.json?" + query, {
      headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!res.ok) throw new Error("the count: " + res.status);
    return res.json();
  }

  async function choose(form, button) {
    const action = button.dataset.action;
    const scope = button.dataset.scope;
    form.querySelector("input[name=scope]").value = scope;
    if (scope === "selected") {
      const n = form.querySelectorAll("input[name=id]:checked").length;
      if (!n) { ask(form, "Tick the tasks first.", action, 0); return; }
      ask(form, VERB[action] + " the " + plural(n) + " selected? Each keeps its own rules.",
          action, n);
      return;
    }
    try {
      const found = await matchingCount(form);
      if (found.more) {
        ask(form, "More than " + plural(found.max) + " match: narrow the filters first.",
            action, 0);
      } else if (!found.count) {
        ask(form, "No task matches these filters.", action, 0);
      } else {
        ask(form, VERB[action] + " all " + plural(found.count) +
            " matching these filters? Each keeps its own rules.", action, found.count);
      }
    } catch (err) {
      ask(form, "Could not count the matching tasks: " + err.message, action, 0);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("bulk");
    if (!form) return;
    form.addEventListener("click", (ev) => {
      const button = ev.target.closest && ev.target.closest("button");
      if (!button) return;
      if (button.dataset.action) choose(form, button);
      else if (button.classList.contains("keep")) unask(form);
    });
    const all = document.getElementById("select-all");
    if (all) {
      all.addEventListener("change", () => {
        for (const box of form.querySelectorAll("input[name=id]")) box.checked = all.checked;
      });
    }
  });
})();
