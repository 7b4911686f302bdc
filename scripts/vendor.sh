#!/usr/bin/env bash
# Fetch the book's JavaScript from the npm registry into $1 (git-ignored), so the rendered
# pages load MathJax, RequireJS and the ipywidgets HTML manager from the book itself.
# The manager keeps its CDN layout (@jupyter-widgets/html-manager/dist/) because it finds its
# fonts relative to the page's data-jupyter-widgets-cdn attribute (see _config.yml).
# Versions: MathJax 3, and @jupyter-widgets/html-manager 1.0.x, the manager of ipywidgets 8.
set -euo pipefail
dest=${1:?usage: vendor.sh DEST}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$work" \
    mathjax@3.2.2 requirejs@2.3.8 @jupyter-widgets/html-manager@1.0.15 >/dev/null
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
echo "vendored into $dest: $(du -sh "$dest" | cut -f1)"
