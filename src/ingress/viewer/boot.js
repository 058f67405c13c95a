
// ---------- start ----------
theme();
window.addEventListener('hashchange', route);
connect();
route();
