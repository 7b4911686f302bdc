// make pdf: prepares the drawn page for paper (scripts/pdf.py runs this function in it, once
// its images, widgets and math are ready). Returns the ids of the headings listed in the
// contents, in order; scripts/pdf.py then writes their page numbers into the contents.
(options) => {
    const article = document.querySelector('article.bd-article') || document.body;
    // The fixed words, in the edition's language (scripts/pdf.py: words()).
    const words = Object.assign({
        contents: 'Contents', introduction: 'Introduction', comma: ', ', and: ' and ',
        sliders: 'Printed at {settings}; in the HTML book, sliders change {listed}.',
        controls: 'Printed at {settings}; in the HTML book, the controls change {listed}.',
    }, options.words || {});
    const HEADINGS = 'h1, h2, h3, h4, h5';
    const level = (heading) => Number(heading.tagName[1]);
    const renamed = (heading, newLevel) => {
        const copy = document.createElement(`h${newLevel}`);
        for (const attribute of heading.attributes) copy.setAttribute(attribute.name, attribute.value);
        while (heading.firstChild) copy.appendChild(heading.firstChild);
        heading.replaceWith(copy);
        return copy;
    };

    // In the one-page book the root document (the introduction) is a chapter like the others:
    // its headings go one level down, to its chapters' level, and its title (the book's) is
    // printed as "Introduction" (words.introduction; the title page carries the book's title).
    // The root document's title is the page's first heading: the book's title, or, in an
    // edition whose introduction has a title of its own (the zh one), that title.
    if (article.querySelector('span[id^="document-"]')) {
        let first = true;
        for (const heading of Array.from(article.querySelectorAll(HEADINGS))) {
            if (heading.closest('.toctree-wrapper')) continue;
            const copy = renamed(heading, level(heading) + 1);
            const text = copy.firstChild;
            if (options.title && text && text.nodeType === Node.TEXT_NODE
                    && (first || text.textContent.trim() === options.title)) {
                text.textContent = words.introduction;
            }
            first = false;
        }
    }

    // Widgets: the controls (sliders, radio buttons) are hidden; a note says which setting
    // the printed frame shows.
    for (const box of article.querySelectorAll('.widget-vbox')) {
        const controls = Array.from(box.children)
            .filter((child) => child.matches('.widget-slider, .widget-hslider, .widget-radio'));
        if (controls.length === 0) continue;
        const part = (control, selector) => {
            const node = control.querySelector(selector);
            return node ? node.textContent.trim() : '';
        };
        const names = controls.map((control) => part(control, '.widget-label'));
        const settings = controls.map((control, i) => `${names[i]} = ${
            part(control, control.matches('.widget-radio')
                ? '.widget-radio-box label:has(input:checked)' : '.widget-readout')}`);
        const listed = names.length < 2 ? names[0]
            : `${names.slice(0, -1).join(words.comma)}${words.and}${names[names.length - 1]}`;
        const template = controls.some((control) => control.matches('.widget-radio'))
            ? words.controls : words.sliders;
        const note = document.createElement('p');
        note.className = 'pdf-widget-note';
        note.textContent = template.replace('{settings}', () => settings.join(words.comma))
            .replace('{listed}', () => listed);
        box.classList.add('pdf-widget');
        box.insertBefore(note, controls[0]);
    }

    // Bookmarks: chromium titles each one with the text painted inside its heading, and
    // MathJax paints its glyphs from CSS, which that text leaves out ("costs " for "costs
    // nε"). A transparent copy of each formula in Unicode, read from MathJax's MathML, is
    // painted beside it (pdf_print.css: .pdf-math-text).
    const SUP = {'0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷',
                 '8': '⁸', '9': '⁹', '+': '⁺', '-': '⁻', '−': '⁻', 'n': 'ⁿ', 'i': 'ⁱ'};
    const SUB = {'0': '₀', '1': '₁', '2': '₂', '3': '₃', '4': '₄', '5': '₅', '6': '₆', '7': '₇',
                 '8': '₈', '9': '₉', '+': '₊', '-': '₋', '−': '₋', 'i': 'ᵢ', 'k': 'ₖ', 'n': 'ₙ'};
    const script = (text, table, mark) => {
        const chars = Array.from(text);
        return chars.every((c) => table[c]) ? chars.map((c) => table[c]).join('')
            : `${mark}${chars.length > 1 ? `(${text})` : text}`;
    };
    const mathText = (node) => {
        const kids = Array.from(node.children);
        const all = () => kids.map(mathText).join('');
        switch (node.localName) {
            case 'msup': return mathText(kids[0]) + script(mathText(kids[1]), SUP, '^');
            case 'msub': return mathText(kids[0]) + script(mathText(kids[1]), SUB, '_');
            case 'msubsup': return mathText(kids[0]) + script(mathText(kids[1]), SUB, '_')
                + script(mathText(kids[2]), SUP, '^');
            case 'mfrac': return `${mathText(kids[0])}/${mathText(kids[1])}`;
            case 'msqrt': {
                const inner = all();
                return `√${Array.from(inner).length > 1 ? `(${inner})` : inner}`;
            }
            case 'mo': {
                const op = node.textContent.replace(/[\u2061-\u2064]/g, '').trim();
                return /^[=<>≤≥≈+−×·→]$/.test(op) ? ` ${op} ` : op;
            }
            default: return kids.length ? all() : node.textContent.replace(/[\u2061-\u2064]/g, '');
        }
    };
    for (const math of article.querySelectorAll(
            ':is(h1, h2, h3, h4, h5) mjx-container:not(:has(+ .pdf-math-text))')) {
        const mml = math.querySelector('mjx-assistive-mml math');
        if (!mml) continue;
        const copy = document.createElement('span');
        copy.className = 'pdf-math-text';
        copy.textContent = mathText(mml).replace(/\s+/g, ' ').trim();
        math.after(copy);
    }

    // The contents: the two highest heading levels (chapters and their sections).
    const headings = Array.from(article.querySelectorAll(HEADINGS));
    if (headings.length === 0) return [];
    const top = Math.min(...headings.map(level));
    const listed = headings.filter((heading) => level(heading) <= top + 1);
    const ids = listed.map((heading, i) => {
        if (!heading.id) heading.id = `pdf-toc-${i}`;
        return heading.id;
    });
    if (!options.title) return ids;

    const element = (tag, className, text) => {
        const node = document.createElement(tag);
        if (className) node.className = className;
        if (text !== undefined) node.textContent = text;
        return node;
    };
    const front = element('div', 'pdf-front');
    const titlePage = element('section', 'pdf-title-page');
    titlePage.append(element('p', 'pdf-title', options.title));
    if (options.author) titlePage.append(element('p', 'pdf-author', options.author));
    for (const html of options.notes || []) {
        const note = element('div', 'pdf-note');
        note.innerHTML = html;
        titlePage.append(note);
    }
    const toc = element('nav', 'pdf-toc');
    toc.setAttribute('aria-label', words.contents);
    toc.append(element('h2', 'pdf-toc-title', words.contents));

    const list = element('ul');
    listed.forEach((heading, i) => {
        const item = element('li', `pdf-toc-level-${level(heading) - top + 1}`);
        const link = element('a');
        link.href = `#${ids[i]}`;
        const label = element('span', 'pdf-toc-label');
        label.innerHTML = heading.innerHTML;
        label.querySelectorAll('.headerlink, .pdf-math-text').forEach((node) => node.remove());
        const page = element('span', 'pdf-toc-page', '000');
        page.dataset.target = ids[i];
        link.append(label, element('span', 'pdf-toc-leader'), page);
        item.append(link);
        list.append(item);
    });
    toc.append(list);
    front.append(titlePage, toc);
    article.prepend(front);
    document.title = options.title;
    return ids;
}
