// The login form: POST /login {token, next} as JSON; the server answers where to go
// (always a page of its own) and sets the session cookie.
(function () {
  'use strict';
  var form = document.getElementById('login');
  var button = document.getElementById('submit');
  var error = document.getElementById('error');
  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    error.textContent = '';
    button.disabled = true;
    var next = new URLSearchParams(location.search).get('next') || '/';
    // The page's own place (#changelog) survives the redirect here in our fragment.
    if (location.hash && next.indexOf('#') < 0) next += location.hash;
    fetch('/login', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'Accept': 'application/json' },
      body: JSON.stringify({ token: document.getElementById('token').value.trim(), next: next })
    }).then(function (r) {
      return r.json().then(function (j) { return { ok: r.ok, body: j }; });
    }).then(function (res) {
      if (res.ok) {
        location.replace(res.body.next || '/');
        return;
      }
      var msg = res.body && res.body.errors && res.body.errors[0] ? res.body.errors[0].message : 'login failed';
      error.textContent = msg;
      button.disabled = false;
    }).catch(function (e) {
      error.textContent = 'cannot reach the server: ' + e.message;
      button.disabled = false;
    });
  });
  // Enabled only once the handler is attached, so the form never posts natively.
  button.disabled = false;
})();
