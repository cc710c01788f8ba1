// Canal console: the WebAuthn ceremonies (register, log in, sign a decision). The server sends the
// options as JSON with base64url fields; this turns them into ArrayBuffers, asks the browser's
// authenticator, and posts the result back with the session's CSRF token. Nothing else runs here.
"use strict";

function b64urlToBuf(s) {
  const pad = "=".repeat((4 - (s.length % 4)) % 4);
  const bin = atob((s + pad).replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out.buffer;
}

function bufToB64url(buf) {
  const bytes = new Uint8Array(buf);
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function csrf() {
  return document.querySelector("meta[name=csrf]").content;
}

function showError(err) {
  const box = document.getElementById("error");
  box.textContent = "";
  const code = document.createElement("code");
  code.textContent = err.code || "CONSOLE_ERROR";
  box.appendChild(code);
  box.appendChild(document.createTextNode(" " + (err.message || "")));
  if (err.hint) box.appendChild(document.createTextNode(" Next: " + err.hint));
  box.hidden = false;
}

function showMessage(text) {
  document.getElementById("error").hidden = true;
  const box = document.getElementById("message");
  box.textContent = text;
  box.hidden = false;
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf()},
    body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok || data.error) throw data.error || {code: "CONSOLE_ERROR", message: response.statusText};
  return data;
}

function creationOptions(o) {
  o.challenge = b64urlToBuf(o.challenge);
  o.user.id = b64urlToBuf(o.user.id);
  (o.excludeCredentials || []).forEach((c) => { c.id = b64urlToBuf(c.id); });
  return o;
}

function requestOptions(o) {
  o.challenge = b64urlToBuf(o.challenge);
  (o.allowCredentials || []).forEach((c) => { c.id = b64urlToBuf(c.id); });
  return o;
}

function attestationJSON(cred) {
  return {id: cred.id, rawId: bufToB64url(cred.rawId), type: cred.type,
          response: {clientDataJSON: bufToB64url(cred.response.clientDataJSON),
                     attestationObject: bufToB64url(cred.response.attestationObject),
                     transports: cred.response.getTransports ? cred.response.getTransports() : []}};
}

function assertionJSON(cred) {
  const r = cred.response;
  return {id: cred.id, rawId: bufToB64url(cred.rawId), type: cred.type,
          response: {clientDataJSON: bufToB64url(r.clientDataJSON),
                     authenticatorData: bufToB64url(r.authenticatorData),
                     signature: bufToB64url(r.signature),
                     userHandle: r.userHandle ? bufToB64url(r.userHandle) : null}};
}

async function sign(optionsUrl, verifyUrl, body) {
  const options = await post(optionsUrl, body);
  const cred = await navigator.credentials.get({publicKey: requestOptions(options.publicKey)});
  return post(verifyUrl, {credential: assertionJSON(cred)});
}

function failed(err) {
  showError(err && err.code ? err : {code: "PASSKEY_CANCELLED", message: String(err)});
}

async function register() {
  const approver = document.getElementById("approver").value.trim();
  const options = await post("/api/register/options", {approver});
  const cred = await navigator.credentials.create({publicKey: creationOptions(options.publicKey)});
  const done = await post("/api/register/verify", {credential: attestationJSON(cred)});
  document.getElementById("credential-line").textContent = done.line;
  document.getElementById("credential-yaml").textContent = done.yaml;
  document.getElementById("credential-next").textContent = done.next;
  document.getElementById("enrol").hidden = false;
  showMessage("passkey created for " + approver + ": add its line to canal.yaml");
}

async function login() {
  const approver = document.getElementById("approver").value.trim();
  const done = await sign("/api/login/options", "/api/login/verify", {approver});
  window.location.assign(done.next);
}

async function decide(row, decision) {
  const token = row.dataset.token;
  const reason = row.querySelector("input.reason").value;
  row.querySelectorAll("button").forEach((b) => { b.disabled = true; });
  try {
    const done = await sign("/api/decide/options", "/api/decide/verify", {token, decision, reason});
    row.classList.remove("pending");
    row.classList.add("decided");
    row.querySelector("td.decision").textContent = done.pending.status + " by " + done.pending.approved_by;
    showMessage(done.message);
  } catch (err) {
    row.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    throw err;
  }
}

async function approveSettings(button) {
  button.disabled = true;
  try {
    const done = await sign("/api/config/options", "/api/config/verify", {digest: button.dataset.digest});
    showMessage(done.message);
    document.getElementById("settings-state").textContent = "approved";
    button.hidden = true;
  } catch (err) {
    button.disabled = false;
    throw err;
  }
}

function on(id, handler) {
  const form = document.getElementById(id);
  if (form) form.addEventListener("submit", (e) => { e.preventDefault(); handler().catch(failed); });
}

document.addEventListener("DOMContentLoaded", () => {
  on("login-form", login);
  on("register-form", register);
  const settings = document.getElementById("approve-settings");
  if (settings) settings.addEventListener("click", () => approveSettings(settings).catch(failed));
  document.querySelectorAll("tr.pending").forEach((row) => {
    row.querySelector("button.approve").addEventListener("click", () => decide(row, "approve").catch(failed));
    row.querySelector("button.deny").addEventListener("click", () => decide(row, "deny").catch(failed));
  });
});
