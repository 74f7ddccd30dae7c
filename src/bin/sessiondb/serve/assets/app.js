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
function reveal() {
  if (!location.hash.startsWith("#entry-")) return;
  const el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!el) return;
  el.classList.add("target");
  el.querySelectorAll("details").forEach((d) => { d.open = true; });
  el.scrollIntoView({ block: "center" });
}
window.addEventListener("hashchange", reveal);
document.addEventListener("DOMContentLoaded", reveal);
