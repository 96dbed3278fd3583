// Sets the saved piece theme before the page is painted (a classic script in
// <head>, not a module, so it runs at once). It lives in a file because the
// Content-Security-Policy allows no inline script.
document.documentElement.dataset.theme =
  localStorage.getItem("chess.theme") === "classic" ? "classic" : "candy";
