// MathJax 3's configuration for pymdownx.arithmatex (generic mode): typeset only the spans arithmatex marks.
// tex-chtml.js is served from the site itself (assets/mathjax/, see tools/docs.py mathjax_files).
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};
