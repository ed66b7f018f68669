// The sign-in form says when the last token was refused.
"use strict";
if (new URLSearchParams(location.search).has("failed")) {
  document.getElementById("failed").hidden = false;
}
