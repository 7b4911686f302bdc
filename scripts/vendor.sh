#!/usr/bin/env bash
# Fetch the book's JavaScript from the npm registry into $1 (git-ignored), so the rendered
# pages load MathJax, RequireJS and the ipywidgets HTML manager from the book itself; and,
# into $2 (git-ignored, not part of the book), reveal.js for the slide decks of `make slides`
# (scripts/slides.py, which also copies MathJax from $1) and axe-core, the accessibility
# checker the browser test runs on every built page (tests/test_browser.py).
# The manager keeps its CDN layout (@jupyter-widgets/html-manager/dist/) because it finds its
# fonts relative to the page's data-jupyter-widgets-cdn attribute (see _config.yml).
# Versions: MathJax 3, @jupyter-widgets/html-manager 1.0.x (the manager of ipywidgets 8),
# reveal.js 6.0.x (MIT; its licence is copied beside it, into $2/reveal.js/LICENSE),
# axe-core 4.x (MPL-2.0; its licence is copied beside it).
set -euo pipefail
dest=${1:?usage: vendor.sh DEST TEST_DEST}
test_dest=${2:?usage: vendor.sh DEST TEST_DEST}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$work" \
    mathjax@3.2.2 requirejs@2.3.8 @jupyter-widgets/html-manager@1.0.15 reveal.js@6.0.2 \
    axe-core@4.14.1 >/dev/null
mods=$work/node_modules
rm -rf "$dest"
manager="$dest/@jupyter-widgets/html-manager/dist"
mkdir -p "$dest/mathjax/output" "$manager"
cp "$mods/mathjax/es5/tex-chtml.js" "$dest/mathjax/"
cp -r "$mods/mathjax/es5/input" "$mods/mathjax/es5/a11y" "$mods/mathjax/es5/ui" \
      "$mods/mathjax/es5/sre" "$mods/mathjax/es5/adaptors" "$dest/mathjax/"
cp -r "$mods/mathjax/es5/output/chtml" "$mods/mathjax/es5/output/chtml.js" "$dest/mathjax/output/"
cp "$mods/requirejs/require.js" "$dest/require.js"
find "$mods/@jupyter-widgets/html-manager/dist" -maxdepth 1 -type f \
     ! -name '*.map' ! -name 'embed.js' ! -name 'libembed-amd.js' -exec cp {} "$manager/" \;
# reveal.js: the script, its base style and the white theme (its fonts are embedded as data:
# URLs; other themes import fonts from the network).
rm -rf "$test_dest/reveal.js"
mkdir -p "$test_dest/reveal.js/theme"
cp "$mods/reveal.js/dist/reveal.js" "$mods/reveal.js/dist/reveal.css" "$mods/reveal.js/LICENSE" \
   "$test_dest/reveal.js/"
cp "$mods/reveal.js/dist/theme/white.css" "$test_dest/reveal.js/theme/"
rm -rf "$test_dest/axe-core"
mkdir -p "$test_dest/axe-core"
cp "$mods/axe-core/axe.min.js" "$mods/axe-core/LICENSE" "$test_dest/axe-core/"
echo "vendored into $dest: $(du -sh "$dest" | cut -f1); reveal.js and axe-core into $test_dest"
