// sessiondb serve: the only script the pages load (the CSP forbids any other). It copies
// commands to the clipboard and opens the entry a link points at; pages work without it.
"use strict";
document.addEventListener("click", (ev) => {
  const button = ev.target.closest("button.copy");
  if (!button) return;
  const text = button.getAttribute("data-copy") || "";
  navigator.clipboard.writeText(text).then(
    () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 1500); },
    () => { button.textContent = "Select and copy"; }
  );
});
// `#ID` names an entry by its id: the article whose id it is (not another element of the page
// a planted id could share its name with).
function reveal() {
  if (location.hash.length < 2) return;
  let id;
  try { id = decodeURIComponent(location.hash.slice(1)); } catch { return; }
  const el = [...document.querySelectorAll("article.entry")].find((a) => a.dataset.entryId === id);
  if (!el) return;
  el.classList.add("target");
  el.querySelectorAll("details").forEach((d) => { d.open = true; });
  el.scrollIntoView({ block: "center" });
}
window.addEventListener("hashchange", reveal);
// A huge session's tree comes after its first screen (our own escaped markup, same origin).
// Found by element and class, not by id alone: an entry's article has its entry's id, which a
// session may name "tree".
function loadTree() {
  const lazy = document.querySelector("aside.tree > p#tree-lazy");
  if (!lazy) return;
  fetch(lazy.getAttribute("data-src"), { credentials: "same-origin" })
    .then((r) => (r.ok ? r.text() : Promise.reject(new Error(String(r.status)))))
    .then((html) => { lazy.parentElement.innerHTML = html; })
    .catch(() => { lazy.append(" (could not load: follow the link)"); });
}
document.addEventListener("DOMContentLoaded", loadTree);
document.addEventListener("DOMContentLoaded", reveal);
