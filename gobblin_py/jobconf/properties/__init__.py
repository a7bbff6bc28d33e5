"""Java-properties parsing with the exact semantics of Apache commons-configuration 1.10.

Gobblin reads ``.pull``/``.job`` job files, ``.properties`` globals and the system configuration with
``PropertiesConfiguration`` (then ``ConfigurationConverter.getProperties``). This package reproduces that
pipeline (spec ``gobblin-runtime.md`` §1.5, §1.6):

* logical lines: blank lines and lines starting with ``#``/``!`` are comments (also in the middle of a
  continuation); other lines are trimmed (Java ``trim``); an odd number of trailing backslashes joins the
  line with the next one;
* key/value split on the first whitespace run, ``=`` or ``:``; Java unescaping of keys and values (``\\,``
  is kept in values for the list splitter);
* list splitting on ``,`` (only when the comma index is > 0; ``\\,`` and ``\\\\`` honoured; pieces trimmed)
  unless delimiter parsing is disabled; duplicate keys accumulate;
* ``include`` (any case) loads other files at that point;
* output: every stored element is interpolated (``${key}``, ``${env:X}``, ``${sys:x}``, ``$${`` escape,
  first element of multi-valued keys, unresolved references kept verbatim, cycles rejected) and the
  elements of a key are joined with ``,``.

Differences from commons-configuration, all deliberate: files (also included ones) are decoded as UTF-8
with a leading byte-order mark dropped, and a file holding bytes that are not UTF-8, NUL or other control
characters is refused (file and line named); includes are resolved against the including file's folder, then
the working directory (never the user's home or a classpath); ``${const:...}`` finds nothing (there are
no Java constants); lines without a separator and include cycles are reported instead of being silently
turned into an empty key or a stack overflow; a ``\\u`` escape cut short by the end of a line is refused (as
``java.util.Properties`` refuses it) instead of dropped; a value referring to its own key is refused even when
the key is repeated, instead of giving the first value and a comma-joined list.

Modules: :mod:`.syntax` (lines, escapes, lists), :mod:`.interpolation`, :mod:`.model` (:class:`PropertiesFile`)
and :mod:`.reader` (files and includes).
"""

from .model import LineProblem, PropertiesFile
from .reader import load_properties, parse_properties, read_text_file
from .syntax import java_trim, split_list

__all__ = [
    "LineProblem",
    "PropertiesFile",
    "parse_properties",
    "load_properties",
    "java_trim",
    "split_list",
    "read_text_file",
]
