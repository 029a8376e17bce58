// Package site builds pinfold's static site: what pinfold is and the
// launch line, the threat model (SECURITY.md), every register entry with
// its latest dated result per machine from `launcher register check
// --out` files, the policy reference generated from the policy schema,
// the bench figures as SVG charts, and the hash playground — plus
// manifest.json, every file's sha256, which Verify checks once the
// manifest's own sha256 matches the one its publisher gave (Write
// returns it).
//
// The site is flat (no directories), self-contained (no external script,
// font or stylesheet; each page's Content-Security-Policy allows only its
// own files and no connection at all, so the playground cannot upload
// what it hashes) and reproducible: Build reads nothing but its Input
// (no clock, no host), orders every list by content (never by the order
// or the paths of its input files), and so gives the same bytes for the
// same inputs — also when rebuilt from the data files it serves.
//
// The playground flags what the launcher's text check refuses. Rather
// than restating that rule in JavaScript, the build generates the set of
// refused code points from Go's unicode.IsPrint, the function the
// launcher calls (nonprint.js), so the page and the launcher cannot
// drift apart; the browser test compares them on a corpus.
//
// The data behind the pages is part of the site: each evidence file and
// bench report is served as JSON named by its content's hash (its first
// 64 bits; Build refuses two different inputs that share them) and linked
// from its page, so a reader can take the numbers, not only the pictures.
//
// Pages are written for a phone first: lists rather than wide tables
// (a four-column table of machines and dates left one word per line at
// 375 pixels), charts with each bar's name above it in a narrow picture
// so that the text stays legible when scaled down, dates that wrap at
// spaces. The browser test walks every page with the keyboard alone and
// loads the playground both from files and from a loopback server.
//
// SECURITY.md is rendered by a small Markdown subset renderer
// (markdown.go) that escapes every byte of its source: the chosen
// dependencies include no Markdown library, and the subset is what that
// file uses.
//
// Evidence and bench files may come from other machines, so every field
// of them is text to escape (html/template, svgText), and every page and
// chart is rewritten last so that what the launcher's text check refuses
// (not unicode.IsPrint: bidi overrides, zero-width characters, controls)
// and bytes that are not UTF-8 show as ⟨U+XXXX⟩ and ⟨0xXX⟩ (visible): a
// kernel string's U+202E could otherwise reverse the rest of its line and
// make an evidence file's "2 fail" read as a pass. The data files keep
// the input's text as JSON holds it (a byte that is not UTF-8 becomes
// U+FFFD there).
//
// # Limitations
//
// Verify is only as good as the channel the manifest's sha256 came by:
// a hash taken from the hosted site itself proves nothing. Verify opens
// each listed name once without following links or waiting on a FIFO,
// but opening a device node listed in a manifest can still have that
// device's side effects before fstat refuses it. Write checks that an
// existing directory is a site it built and then replaces it; a change
// made to that directory between the check and the rename is lost.
//
// Build and Write refuse a site that verify could not read (a file over
// 64 MiB, a manifest over 1 MiB): very long input text, or thousands of
// bench files, stop the build rather than publish a site that never
// verifies.
//
// Evidence is whatever its file says: anyone can write a file naming any
// machine and date, and the page shows the newest result per machine, so
// a forged later pass replaces a real failure. The machine's name on the
// page is its fields joined by commas, so two machines whose strings
// hold those commas can share a name and a row; its launcher_version is
// not part of it, so a result of an older launcher's check stands beside
// today's. Only the data files' hashes in the pinned manifest tie the
// page to what was read.
package site
