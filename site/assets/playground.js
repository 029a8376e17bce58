// The hash playground: the sha256 of a policy file, computed here with
// WebCrypto (nothing is sent anywhere: the page's Content-Security-Policy
// forbids every connection), and the launcher's text checks, so the
// person sees what the launcher would refuse before pinning the file.
// Everything shown is set as text, never as markup.
"use strict";
(function () {
  const MAX_FILE = 1048576; // policy.MaxFileSize
  const input = document.getElementById("policy-file");
  const result = document.getElementById("result");

  function hex(buf) {
    return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function shellQuote(s) {
    if (/^[A-Za-z0-9_\/.,:@%+=-]+$/.test(s)) return s;
    return "'" + s.replace(/'/g, "'\\''") + "'";
  }

  function u(cp) {
    return "U+" + cp.toString(16).toUpperCase().padStart(4, "0");
  }

  // nonprint: whether the launcher refuses code point cp (not
  // unicode.IsPrint), by binary search in the generated ranges.
  function nonprint(cp) {
    let lo = 0, hi = PINFOLD_NONPRINT.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [a, b] = PINFOLD_NONPRINT[mid];
      if (cp < a) hi = mid - 1;
      else if (cp > b) lo = mid + 1;
      else return true;
    }
    return false;
  }

  // kind and reason, as the launcher explains them.
  function kindOf(cp) {
    if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0x200e || cp === 0x200f || cp === 0x061c)
      return ["bidi", "a bidirectional control: it reorders how the text displays, so the policy would not read as it binds (SR-16)"];
    if ((cp >= 0x200b && cp <= 0x200d) || cp === 0x2060 || cp === 0xfeff)
      return ["zero-width", "a zero-width character: invisible, so the policy would not read as it binds (SR-16)"];
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
      return ["control", "a control character: not allowed in policy text (SR-12)"];
    if (/\p{Zs}/u.test(String.fromCodePoint(cp)) || cp === 0x2028 || cp === 0x2029)
      return ["space", "a space or separator other than the ASCII space and tab: it looks alike or breaks lines invisibly (SR-16)"];
    return ["other", "not a printable character (SR-16)"];
  }

  // decode reads one UTF-8 sequence at i as Go's utf8.DecodeRune does:
  // [code point, width], or [-1, 1] for invalid UTF-8 (overlong forms,
  // surrogates and values past U+10FFFF included).
  function decode(b, i) {
    const c = b[i];
    if (c < 0x80) return [c, 1];
    let n, min, cp;
    if (c >= 0xc2 && c <= 0xdf) { n = 1; min = 0x80; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; min = 0x800; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; min = 0x10000; cp = c & 0x07; }
    else return [-1, 1];
    for (let k = 1; k <= n; k++) {
      const x = b[i + k];
      if (x === undefined || (x & 0xc0) !== 0x80) return [-1, 1];
      cp = (cp << 6) | (x & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return [-1, 1];
    return [cp, n + 1];
  }

  // check lists what the launcher's text check would refuse, each with
  // its line and column (code points, from 1). The launcher stops at the
  // first; the page shows them all (at most 200).
  function check(b) {
    const out = [];
    const add = (kind, line, col, text) => { if (out.length < 200) out.push({ kind, line, col, text }); };
    if (b.length === 0) add("empty", 1, 1, "the file is empty: a policy needs at least version = 1");
    if (b.length > MAX_FILE) add("size", 1, 1, "larger than " + MAX_FILE + " bytes: the launcher reads no more than that");
    let line = 1, col = 1;
    for (let i = 0; i < b.length; ) {
      const [cp, w] = decode(b, i);
      if (cp < 0) {
        add("utf8", line, col, "invalid UTF-8 (byte 0x" + b[i].toString(16).padStart(2, "0") + "): a policy is UTF-8 text");
      } else if (cp === 0x0a) {
        line++; col = 0;
      } else if (cp === 0x09) {
        // allowed
      } else if (cp === 0x0d && b[i + 1] === 0x0a) {
        // CR before LF is allowed
      } else if (cp === 0xfeff && i === 0) {
        add("bom", line, col, u(cp) + ": a byte-order mark: save the file as UTF-8 without BOM");
      } else if (cp === 0) {
        add("control", line, col, "a NUL byte: a policy is text");
      } else if (nonprint(cp)) {
        const [kind, why] = kindOf(cp);
        add(kind, line, col, u(cp) + ": " + why);
      }
      i += w;
      col++;
    }
    return out;
  }

  async function show(file) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    document.getElementById("file-name").textContent = file.name;
    const verdict = document.getElementById("verdict");
    const list = document.getElementById("findings");
    list.replaceChildren();
    if (!window.crypto || !crypto.subtle) {
      document.getElementById("hash").textContent = "";
      verdict.textContent = "This browser gives this page no WebCrypto (open it from a file or over https), so it cannot hash here. Run sha256sum instead.";
      result.hidden = false;
      return;
    }
    const sum = hex(await crypto.subtle.digest("SHA-256", bytes));
    document.getElementById("hash").textContent = sum;
    document.getElementById("launch-line").textContent =
      "launcher --policy-sha256 " + sum + " --policy " + shellQuote(file.name) + " -- AGENT ARGS…";
    const found = check(bytes);
    for (const f of found) {
      const li = document.createElement("li");
      li.dataset.kind = f.kind;
      li.textContent = "line " + f.line + ", column " + f.col + ": " + f.text;
      list.append(li);
    }
    verdict.dataset.refused = found.length > 0 ? "yes" : "no";
    verdict.textContent = found.length > 0
      ? "The launcher would refuse this file's text (" + found.length + (found.length === 200 ? "+" : "") + " problem" + (found.length === 1 ? "" : "s") + "):"
      : "Nothing in the text the launcher would refuse. (Keys and values are checked by launcher policy check.)";
    result.hidden = false;
  }

  function report(err) {
    document.getElementById("verdict").textContent = "Could not read the file: " + err;
    result.hidden = false;
  }

  input.addEventListener("change", () => { if (input.files.length) show(input.files[0]).catch(report); });
  document.addEventListener("dragover", (e) => { e.preventDefault(); });
  document.addEventListener("drop", (e) => {
    e.preventDefault();
    if (e.dataTransfer && e.dataTransfer.files.length) show(e.dataTransfer.files[0]).catch(report);
  });
  document.getElementById("pick").addEventListener("submit", (e) => e.preventDefault());
})();
