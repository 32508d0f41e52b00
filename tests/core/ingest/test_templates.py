"""Template tags of static-site generators (GitBook, Jekyll, Hugo, mkdocs-macros) read as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.ingest.loaders import TEMPLATES_PARSER, load_file
from core.ingest.templates import looks_like_templates, templates_to_markdown

PAGE = """\
# Install

{% hint style="warning" %}
Back up your data first.
{% endhint %}

{% tabs %}
{% tab title="Windows" %}
```powershell
irm https://example.org/install.ps1 | iex
```
{% endtab %}
{% endtabs %}

{% include "footer.md" %}

{{< alert title="Heads up" >}}
Restart the shell.
{{< /alert >}}

{% for user in people %}
A generated line.
{% endfor -%}

Inline {{< kbd "Ctrl" >}} is shown; `{{< param "version" >}}` in code stays as written.

```liquid
{% hint style="info" %}
shown as written
{% endhint %}
```
"""


def test_template_tags_read_as_markdown(tmp_path: Path) -> None:
    page = tmp_path / "install.md"
    page.write_text(PAGE)
    doc = load_file(page, root=tmp_path)
    assert doc.title == "Install" and doc.parser == TEMPLATES_PARSER
    [section] = doc.sections
    assert section.blocks == [
        "Warning: Back up your data first.",
        "Windows:",
        "```powershell\nirm https://example.org/install.ps1 | iex\n```",
        "Heads up: Restart the shell.",
        "A generated line.",
        "Inline Ctrl is shown; `{{< param \"version\" >}}` in code stays as written.",
        "```liquid\n{% hint style=\"info\" %}\nshown as written\n{% endhint %}\n```",
    ]


@pytest.mark.parametrize(("tags", "markdown"), [
    ("{{% notice tip %}}\nHugo's notice.\n{{% /notice %}}", "Tip: Hugo's notice."),
    ("{% hint style='danger' %}\nCareful.\n{% endhint %}", "Danger: Careful."),
    ('{% code title="app.py" %}\n```python\nrun()\n```\n{% endcode %}', "app.py:\n\n```python\nrun()\n```"),
    ("{% raw %}\nKept.\n{% endraw %}", "Kept."),
    ("{% endhint %}\nA closing tag with no opening one goes.", "A closing tag with no opening one goes."),
    ("{{< callout >}}\nNo kind given.\n{{< /callout >}}", "Callout: No kind given."),
    # A note's tag sharing a line with its first or last sentence (Poetry's docs) is read the same.
    ("{{% warning %}} Back up first.\n{{% /warning %}}", "Warning: Back up first."),
    ("{{% note %}}\nRestart the shell. {{% /note %}}", "Note: Restart the shell."),
    ("{% hint style='info' %} Read this.\n{% endhint %}", "Info: Read this."),
    ("{% hint style='info' %}\nRead this. {% endhint %}", "Info: Read this."),
])
def test_block_tags_become_labelled_prose(tags: str, markdown: str) -> None:
    assert re.sub(r"\n{3,}", "\n\n", templates_to_markdown(tags)).strip("\n") == markdown


@pytest.mark.parametrize(("line", "shown"), [
    ('A {{< glossary_tooltip text="Pod" term_id="pod" >}} runs.', "A Pod runs."),
    ("Press {{< kbd >}}Ctrl{{< /kbd >}} + C.", "Press Ctrl + C."),
    ("Since {{< new-in 0.120.0 >}} it works.", "Since 0.120.0 it works."),
    ('Upgrade to {{% latest-version long="true" %}} now.', "Upgrade to  now."),  # nothing it says to show
    ("Docsy {{% param tdVersion.latest %}} needs Hugo {{< new-in 0.144.0 />}}.",
     "Docsy `<tdVersion.latest>` needs Hugo 0.144.0."),
    ("Watch {{< youtube w7Ft2ymGmfc >}} and {{% alert title=\"Warning\" %}}be careful{{% /alert %}}.",
     "Watch  and Warning: be careful."),  # an embed's id is no word; a pair's title leads its words
    # An escaped tag shows the syntax; code keeps it as written.
    ("Shows {{</* param x */>}} as the tag.", "Shows {{< param x >}} as the tag."),
    ("```\nv={{% latest-version %}}\n```", "```\nv={{% latest-version %}}\n```"),
])
def test_a_tag_inside_prose_shows_what_it_says(line: str, shown: str) -> None:
    assert looks_like_templates(line)
    assert templates_to_markdown(line) == shown


def test_many_unclosed_tags_and_deep_nesting_stay_cheap() -> None:
    many = "{% include x.md %}\n" * 20_000 + "Text."
    assert templates_to_markdown(many).strip() == "Text."
    deep = "{% if a %}\n" * 300 + "Deep.\n" + "{% endif %}\n" * 300
    assert templates_to_markdown(deep).strip() == "Deep."


def test_detection() -> None:
    assert looks_like_templates("{% hint %}\nx\n{% endhint %}") and looks_like_templates("{{< toc >}}")
    assert not looks_like_templates("Plain text with {{ a variable }} and {% inline %} tags.")


@pytest.mark.parametrize(("prose", "shown"), [
    ('{{< kbd "Ctrl" >}} + C copies the cell.', "Ctrl + C copies the cell."),  # opening prose: no note
    ("Text {{< /a >}} and more text stays.", "Text  and more text stays."),
])
def test_an_inline_tag_opening_prose_or_a_stray_closing_one_is_no_block(prose: str, shown: str) -> None:
    assert templates_to_markdown(f"{prose}\n{{{{< toc >}}}}").strip() == shown


def test_hugo_page_references_read_as_the_page_they_name() -> None:
    page = ('See [the CLI]({{< relref "cli#install" >}} "Commands") and {{< ref \'docs/intro.md\' >}}; '
            'write `{{< relref "page" >}}`.\n\n```\n{{< relref "kept" >}}\n```')
    assert looks_like_templates(page)
    assert templates_to_markdown(page) == (
        'See [the CLI](cli#install "Commands") and docs/intro.md; write `{{< relref "page" >}}`.\n\n'
        '```\n{{< relref "kept" >}}\n```')


def test_hugo_docs_showing_tags_read_as_the_site_shows_them() -> None:
    page = (
        "{{< tabpane >}}\n{{< tab header=\"Configuration file:\" disabled=true />}}\n"
        "{{< tab header=\"hugo.toml\" lang=\"toml\" >}}\n# Add your versions here\n[params]\n"
        "  version = \"0.1\"\n{{< /tab >}}\n{{< /tabpane >}}\n\n"
        "{{< comment >}}\nA note for the page's editors.\n{{< /comment >}}\n\n"
        "{{< highlight yaml >}}\na: 1\n{{< /highlight >}}\n\n"
        "{{< code-toggle file=hugo >}}\n# Site\nbaseURL = 'x'\n{{< /code-toggle >}}\n\n"
        "Write `{{%/* alert */%}}` like this:\n\n"
        "```go-html-template\n{{</* card\n  header=\"a\"\n*/>}}\n```\n\n"
        "{{< card\n  header=\"**Imagine**\"\n>}}\nNo heaven.\n{{< /card >}}\n")
    assert looks_like_templates(page)
    read = templates_to_markdown(page)
    # A tab of code is a code block (its "# comment" no heading), labelled as the tab is.
    assert "```toml title=\"hugo.toml\"\n# Add your versions here\n[params]\n  version = \"0.1\"\n```" in read
    assert "```yaml\na: 1\n```" in read
    assert "```\n# Site\nbaseURL = 'x'\n```" in read  # a site's own code tag: code of no stated language
    assert "editors" not in read and "{{" not in read.replace("{{% alert %}}", "").replace("{{< card", "")
    assert "Write `{{% alert %}}` like this:" in read
    assert "```go-html-template\n{{< card\n  header=\"a\"\n>}}\n```" in read
    assert "**Imagine**: No heaven." in read  # a tag written over three lines is one tag


def test_a_tag_written_over_lines_is_one_tag() -> None:
    page = "{{< card\n  header=\"A\"\n>}}\nBody.\n{{< /card >}}\n"
    assert templates_to_markdown(page).strip() == "A: Body."


@pytest.mark.parametrize(("page", "kept"), [
    ("{{< figure src=\"a.png\"\n\nPara 1.\n>}}\n\nLast.\n", ["Para 1.", "Last."]),
    ("{{< tabpane\n```yaml\na: 1 # >}}\n```\nafter\n", ["```yaml", "after"]),
    ("{{< alert title=\"x\"\nprose one\n{{< /alert >}}\nafter\n", ["prose one", "after"]),
    ("{{< card\n" + "text\n" * 30 + ">}}\n", ["text\n" * 30]),
])
def test_a_tag_never_runs_over_a_blank_line_a_fence_or_another_tag(page: str, kept: list[str]) -> None:
    read = templates_to_markdown(page)
    assert all(text in read for text in kept)


def test_escaped_tags_outside_code_read_as_the_tags_shown() -> None:
    page = "{{%/* notice tip */%}}\nA tip.\n{{%/* /notice */%}}\n\n{{</* figure\n  src=\"a.png\" */>}}\n"
    assert templates_to_markdown(page) == (
        "{{% notice tip %}}\nA tip.\n{{% /notice %}}\n\n{{< figure src=\"a.png\" >}}\n")


def test_a_pane_s_language_is_its_tabs() -> None:
    read = templates_to_markdown(
        "{{< tabpane lang=\"yaml\" >}}\n{{< tab header=\"Linux\" >}}\nkey: 1\n{{< /tab >}}\n"
        "{{< tab header=\"Mac\" >}}\nkey: 2\n{{< /tab >}}\n{{< /tabpane >}}\n")
    assert "```yaml title=\"Linux\"\nkey: 1\n```" in read and "```yaml title=\"Mac\"\nkey: 2\n```" in read
    assert "{{" not in read


def test_a_pane_or_tab_of_text_is_text_whatever_its_lang() -> None:
    page = ("{{< tabpane text=true >}}\n{{% tab header=\"English\" lang=\"en\" %}}\n**Welcome!**\n"
            "{{% /tab %}}\n{{< /tabpane >}}\n\n"
            "{{< tab header=\"Swahili\" lang=\"sw\" text=true >}}\nKaribu\n{{< /tab >}}\n")
    read = templates_to_markdown(page)
    assert "English: **Welcome!**" in read and "Swahili: Karibu" in read and "```" not in read


def test_tag_lines_in_a_tab_of_code_are_code() -> None:
    read = templates_to_markdown(
        "{{< tabpane >}}\n{{< tab header=\"Liquid\" lang=\"liquid\" >}}\n{% if user %}\nHi {{ user.name }}\n"
        "{% endif %}\n{{< /tab >}}\n{{< /tabpane >}}\n\n"
        "{{< tab lang=\"html\" >}}\n{{< figure src=\"a\" >}}\n<p>x</p>\n{{< /tab >}}\n")
    assert "```liquid title=\"Liquid\"\n{% if user %}\nHi {{ user.name }}\n{% endif %}\n```" in read
    assert "```html\n{{< figure src=\"a\" >}}\n<p>x</p>\n```" in read


def test_tabs_named_by_their_pane_or_by_themselves_keep_their_names() -> None:
    page = (
        '{{< tabs ".NET" Go >}}\n{{% codetab %}}\n```csharp\nEnabled = true;\n```\n{{% /codetab %}}\n'
        "{{% codetab %}}\nNot in the Go SDK yet.\n{{% /codetab %}}\n{{< /tabs >}}\n\n"
        '{{< tabs "id" >}}\n{{< tab "macOS" >}}\nRun `brew install x`.\n{{< /tab >}}\n{{< /tabs >}}\n\n'
        '{{< tabs "id2" >}}\n{{< tab >}}\nOne.\n{{< /tab >}}\n{{< tab >}}\nTwo.\n'
        "{{< /tab >}}\n{{< /tabs >}}\n")
    read = templates_to_markdown(page)
    assert ".NET:\n\n```csharp\nEnabled = true;\n```" in read and "Go: Not in the Go SDK yet." in read
    assert "macOS: Run `brew install x`." in read
    # A pane naming fewer tabs than it holds gives none of them a name (its argument is an id).
    assert "\nOne." in read and "id2" not in read
    # A comment among the tabs is none of them; one argument over one tab is the pane's id; an
    # empty name names nothing; a pane named for code holds tabs, not code.
    commented = ("{{< tabs A B >}}\n{{< comment >}}\nx\n{{< /comment >}}\n{{% codetab %}}\nfirst\n"
                 "{{% /codetab %}}\n{{% codetab %}}\nsecond\n{{% /codetab %}}\n{{< /tabs >}}\n")
    assert "A: first" in templates_to_markdown(commented) and "B: second" in templates_to_markdown(commented)
    single = '{{< tabs "id" >}}\n{{< tab >}}\nOnly.\n{{< /tab >}}\n{{< /tabs >}}\n'
    assert templates_to_markdown(single).strip() == "Only."
    assert templates_to_markdown('{{< tab "" >}}\nOne.\n{{< /tab >}}\n').strip() == "One."
    pane = '{{< code-tabs >}}\n{{< tab header="Intro" >}}\nSome prose.\n{{< /tab >}}\n{{< /code-tabs >}}\n'
    assert templates_to_markdown(pane).strip() == "Intro: Some prose."
