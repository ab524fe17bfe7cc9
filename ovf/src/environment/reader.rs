//! The streaming walk over an OVF environment document with quick-xml's `NsReader`.
//!
//! The walk is a fixed-depth recursive descent (Environment > Entity > PropertySection >
//! Property); unknown subtrees are skipped with `read_to_end`, so hostile nesting cannot grow
//! the stack.

use std::collections::HashSet;

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::{Namespace, ResolveResult};
use quick_xml::{NsReader, XmlVersion};

use vmcust_imc::shown;

use super::error::line_column;
use super::{
    EnvError, Environment, EthernetAdapter, Platform, Property, OVF_ENV_NS, VMWARE_OVFENV_NS,
};

/// The namespaces this parser cares about, resolved once per element or attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    /// No namespace (unprefixed attribute, or element without a default namespace).
    None,
    /// [`OVF_ENV_NS`].
    Ovf,
    /// [`VMWARE_OVFENV_NS`].
    Vmware,
    /// Any other namespace, or an undeclared prefix.
    Other,
}

impl Ns {
    fn of(result: &ResolveResult<'_>) -> Self {
        match result {
            ResolveResult::Unbound => Self::None,
            ResolveResult::Bound(Namespace(OVF_ENV_NS)) => Self::Ovf,
            ResolveResult::Bound(Namespace(VMWARE_OVFENV_NS)) => Self::Vmware,
            _ => Self::Other,
        }
    }
}

/// A start (or empty) tag together with what we need to interpret it later.
struct Element<'a> {
    start: BytesStart<'a>,
    ns: Ns,
    empty: bool,
    /// Byte offset of the `<`, for error positions.
    offset: u64,
}

impl<'a> Element<'a> {
    fn local(&self) -> &str {
        self.start.local_name().into_inner()
    }

    /// True for an OVF element with this local name; unqualified elements are accepted too,
    /// for documents that bind `oe:` but declare no default namespace.
    fn is_ovf(&self, local: &str) -> bool {
        matches!(self.ns, Ns::Ovf | Ns::None) && self.local() == local
    }

    fn is_vmware(&self, local: &str) -> bool {
        self.ns == Ns::Vmware && self.local() == local
    }

    fn qname(&self) -> String {
        self.start.name().into_inner().to_owned()
    }
}

struct Walker<'a> {
    input: &'a [u8],
    reader: NsReader<&'a [u8]>,
}

pub(super) fn parse(xml: &[u8]) -> Result<Environment, EnvError> {
    // guestinfo values may carry trailing NULs or newlines; they are not part of the document.
    let end = xml
        .iter()
        .rposition(|&b| b != 0 && !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let mut walker = Walker {
        input: &xml[..end],
        reader: NsReader::from_reader(&xml[..end]),
    };
    walker.document()
}

impl<'a> Walker<'a> {
    fn document(&mut self) -> Result<Environment, EnvError> {
        let root = loop {
            let offset = self.reader.buffer_position();
            match self.read()? {
                Event::Start(start) => break self.checked(start, false, offset)?,
                Event::Empty(start) => break self.checked(start, true, offset)?,
                Event::Text(text) if is_blank(&text) => {}
                Event::Text(text) => {
                    return Err(self.malformed_at(
                        offset + blank_prefix(&text),
                        "text before the root element",
                    ));
                }
                Event::CData(_) | Event::GeneralRef(_) => {
                    return Err(self.malformed_at(offset, "text before the root element"));
                }
                Event::Eof => {
                    let (line, column) = line_column(self.input, offset);
                    return Err(EnvError::NoRoot { line, column });
                }
                // Declaration, comments, processing instructions and a DOCTYPE are allowed.
                _ => {}
            }
        };
        let env = self.environment(root)?;
        // Only comments, processing instructions and blanks may follow the root.
        loop {
            let offset = self.reader.buffer_position();
            match self.read()? {
                Event::Eof => break,
                Event::Text(text) if is_blank(&text) => {}
                Event::Start(_) | Event::Empty(_) => {
                    return Err(
                        self.malformed_at(offset, "a second root element after </Environment>")
                    );
                }
                Event::Text(text) => {
                    return Err(self.malformed_at(
                        offset + blank_prefix(&text),
                        "text after the root element",
                    ));
                }
                Event::CData(_) | Event::GeneralRef(_) => {
                    return Err(self.malformed_at(offset, "text after the root element"));
                }
                _ => {}
            }
        }
        Ok(env)
    }

    fn environment(&mut self, root: Element<'a>) -> Result<Environment, EnvError> {
        if root.local() != "Environment" {
            let (line, column) = line_column(self.input, root.offset);
            return Err(EnvError::WrongRoot {
                line,
                column,
                found: root.qname(),
            });
        }
        if root.ns != Ns::Ovf {
            let (line, column) = line_column(self.input, root.offset);
            let (ns, _) = self.reader.resolver().resolve_element(root.start.name());
            let found = match ns {
                ResolveResult::Unbound => "no namespace".to_owned(),
                ResolveResult::Bound(Namespace(uri)) => format!("\"{uri}\""),
                ResolveResult::Unknown(prefix) => format!("undeclared prefix \"{prefix}\""),
            };
            return Err(EnvError::WrongNamespace {
                line,
                column,
                found,
            });
        }
        let mut env = Environment {
            id: self.attr(&root, "id", Ns::Ovf)?,
            vcenter_id: self.attr(&root, "vCenterId", Ns::Vmware)?,
            ..Environment::default()
        };
        if root.empty {
            return Ok(env);
        }
        while let Some(child) = self.next_child()? {
            if child.is_ovf("PropertySection") {
                self.property_section(child, &mut env.properties)?;
            } else if child.is_ovf("PlatformSection") {
                env.platform = Some(self.platform(child)?);
            } else if child.is_ovf("Entity") {
                let mut entity = super::Entity {
                    id: self.attr(&child, "id", Ns::Ovf)?,
                    properties: Vec::new(),
                };
                if !child.empty {
                    while let Some(section) = self.next_child()? {
                        if section.is_ovf("PropertySection") {
                            self.property_section(section, &mut entity.properties)?;
                        } else {
                            self.skip(section)?;
                        }
                    }
                }
                env.entities.push(entity);
            } else if child.is_vmware("EthernetAdapterSection") {
                self.adapters(child, &mut env.adapters)?;
            } else {
                self.skip(child)?;
            }
        }
        Ok(env)
    }

    fn property_section(
        &mut self,
        section: Element<'a>,
        out: &mut Vec<Property>,
    ) -> Result<(), EnvError> {
        if section.empty {
            return Ok(());
        }
        while let Some(child) = self.next_child()? {
            if child.is_ovf("Property") {
                let Some(key) = self.attr(&child, "key", Ns::Ovf)? else {
                    return Err(self.missing(&child, "oe:key"));
                };
                let value = self.attr(&child, "value", Ns::Ovf)?.unwrap_or_default();
                out.push(Property { key, value });
            }
            self.skip(child)?;
        }
        Ok(())
    }

    fn platform(&mut self, section: Element<'a>) -> Result<Platform, EnvError> {
        let mut platform = Platform::default();
        if section.empty {
            return Ok(platform);
        }
        while let Some(child) = self.next_child()? {
            let slot = match child.local() {
                "Kind" => &mut platform.kind,
                "Version" => &mut platform.version,
                "Vendor" => &mut platform.vendor,
                "Locale" => &mut platform.locale,
                "TimeZone" => &mut platform.time_zone,
                _ => {
                    self.skip(child)?;
                    continue;
                }
            };
            if matches!(child.ns, Ns::Ovf | Ns::None) {
                *slot = Some(self.text(child)?);
            } else {
                self.skip(child)?;
            }
        }
        Ok(platform)
    }

    fn adapters(
        &mut self,
        section: Element<'a>,
        out: &mut Vec<EthernetAdapter>,
    ) -> Result<(), EnvError> {
        if section.empty {
            return Ok(());
        }
        while let Some(child) = self.next_child()? {
            if child.is_vmware("Adapter") {
                let Some(mac) = self.attr(&child, "mac", Ns::Vmware)? else {
                    return Err(self.missing(&child, "ve:mac"));
                };
                let unit_number = match self.attr(&child, "unitNumber", Ns::Vmware)? {
                    None => None,
                    Some(raw) => match raw.trim().parse::<u32>() {
                        Ok(n) => Some(n),
                        Err(_) => {
                            let (line, column) = line_column(self.input, child.offset);
                            return Err(EnvError::InvalidAttribute {
                                line,
                                column,
                                element: child.qname(),
                                attribute: "ve:unitNumber",
                                value: raw,
                                expected: "expected a non-negative integer",
                            });
                        }
                    },
                };
                out.push(EthernetAdapter {
                    mac,
                    network: self.attr(&child, "network", Ns::Vmware)?,
                    unit_number,
                });
            }
            self.skip(child)?;
        }
        Ok(())
    }

    /// Reads up to the next child element of the current element, or `None` at its end tag.
    fn next_child(&mut self) -> Result<Option<Element<'a>>, EnvError> {
        loop {
            let offset = self.reader.buffer_position();
            match self.read()? {
                Event::Start(start) => return Ok(Some(self.checked(start, false, offset)?)),
                Event::Empty(start) => return Ok(Some(self.checked(start, true, offset)?)),
                Event::End(_) => return Ok(None),
                Event::Eof => {
                    return Err(self.malformed_at(
                        offset,
                        "unexpected end of document, an element is not closed",
                    ))
                }
                // Text, comments and the like between sections carry no meaning for us
                // (cloud-init's unfilled template even has `{properties}` text there).
                _ => {}
            }
        }
    }

    /// The text content of a simple element such as `<Kind>`, trimmed.
    fn text(&mut self, element: Element<'a>) -> Result<String, EnvError> {
        let mut text = String::new();
        if element.empty {
            return Ok(text);
        }
        loop {
            let offset = self.reader.buffer_position();
            match self.read()? {
                Event::Text(t) => text.push_str(&t.xml10_content()),
                Event::CData(c) => text.push_str(&c.xml10_content()),
                Event::GeneralRef(r) => {
                    let resolved = match r.resolve_char_ref() {
                        Ok(Some(ch)) => Some(ch),
                        Ok(None) => quick_xml::escape::resolve_predefined_entity(&r)
                            .and_then(|s| s.chars().next()),
                        Err(e) => return Err(self.malformed_at(offset, &e.to_string())),
                    };
                    match resolved {
                        Some(ch) => text.push(ch),
                        None => {
                            let detail = format!("unknown entity &{};", shown::name(&r));
                            return Err(self.malformed_at(offset, &detail));
                        }
                    }
                }
                Event::Start(start) => {
                    // Markup inside a simple value is not ours to interpret; skip it.
                    let nested = self.element(start, false, offset);
                    self.skip(nested)?;
                }
                Event::End(_) => return Ok(text.trim().to_owned()),
                Event::Eof => {
                    return Err(self.malformed_at(
                        offset,
                        "unexpected end of document, an element is not closed",
                    ))
                }
                _ => {}
            }
        }
    }

    /// Skips the rest of `element` (nothing to do for an empty one).
    fn skip(&mut self, element: Element<'a>) -> Result<(), EnvError> {
        if !element.empty {
            if let Err(e) = self.reader.read_to_end(element.start.name()) {
                return Err(self.malformed_at(self.reader.error_position(), &e.to_string()));
            }
        }
        Ok(())
    }

    /// The value of attribute `local` in namespace `ns`, or unprefixed (the prefixed one wins).
    fn attr(&self, element: &Element<'a>, local: &str, ns: Ns) -> Result<Option<String>, EnvError> {
        let mut found = None;
        // Attributes were checked when the element was read (`checked`).
        for attr in element.start.attributes().flatten() {
            let (resolved, name) = self.reader.resolver().resolve_attribute(attr.key);
            let attr_ns = Ns::of(&resolved);
            if name.into_inner() != local || !(attr_ns == ns || attr_ns == Ns::None) {
                continue;
            }
            // quick-xml's message would quote the bad entity, which is part of the value, and
            // any property value may be a password: say where, never what.
            let value = attr.normalized_value(XmlVersion::Implicit1_0).map_err(|_| {
                let detail = format!(
                    "invalid entity or character reference in the value of {} (the value is not shown); write & as &amp;",
                    shown::name(attr.key.as_ref())
                );
                self.malformed_at(element.offset, &detail)
            })?;
            let prefixed = attr_ns == ns;
            if prefixed || found.is_none() {
                found = Some(value.into_owned());
            }
        }
        Ok(found)
    }

    /// [`Walker::element`] after checking the tag's attributes as XML requires: each name once
    /// (also once per namespace and local name, whatever the prefix), no `<` in a value.
    /// quick-xml accepts both; docs/ovf.md calls such documents malformed. Values are never
    /// quoted in these messages.
    fn checked(
        &self,
        start: BytesStart<'a>,
        empty: bool,
        offset: u64,
    ) -> Result<Element<'a>, EnvError> {
        // A set, not a list: an element may carry thousands of attributes within the cap,
        // and comparing each with every earlier one made reading it quadratic.
        let mut seen: HashSet<(&str, &str)> = HashSet::new();
        for attr in start.attributes() {
            let attr = attr.map_err(|e| {
                let detail = match e {
                    quick_xml::events::attributes::AttrError::Duplicated(..) => {
                        "duplicate attribute; give each attribute once".to_owned()
                    }
                    other => other.to_string(),
                };
                self.malformed_at(offset, &detail)
            })?;
            let qname: &str = attr.key.as_ref();
            if attr.value.contains('<') {
                let detail = format!(
                    "`<` inside the value of {} (the value is not shown); write it as &lt;",
                    shown::name(qname)
                );
                return Err(self.malformed_at(offset, &detail));
            }
            let (resolved, local) = self.reader.resolver().resolve_attribute(attr.key);
            if let ResolveResult::Bound(ns) = resolved {
                let local = local.into_inner();
                if !seen.insert((ns.0, local)) {
                    let detail = format!(
                        "duplicate attribute {} (the same namespace and name as another); give each attribute once",
                        shown::name(qname)
                    );
                    return Err(self.malformed_at(offset, &detail));
                }
            }
        }
        Ok(self.element(start, empty, offset))
    }

    fn element(&self, start: BytesStart<'a>, empty: bool, offset: u64) -> Element<'a> {
        let (ns, _) = self.reader.resolver().resolve_element(start.name());
        Element {
            ns: Ns::of(&ns),
            start,
            empty,
            offset,
        }
    }

    fn read(&mut self) -> Result<Event<'a>, EnvError> {
        self.reader
            .read_event()
            .map_err(|e| self.malformed_at(self.reader.error_position(), &e.to_string()))
    }

    fn missing(&self, element: &Element<'a>, attribute: &'static str) -> EnvError {
        let (line, column) = line_column(self.input, element.offset);
        EnvError::MissingAttribute {
            line,
            column,
            element: element.qname(),
            attribute,
        }
    }

    fn malformed_at(&self, offset: u64, detail: &str) -> EnvError {
        let (line, column) = line_column(self.input, offset);
        EnvError::Malformed {
            line,
            column,
            detail: lower_first(&cut_detail(detail)),
        }
    }
}

/// Messages from quick-xml can name elements of any length; keep them to a few lines.
fn cut_detail(detail: &str) -> String {
    const MAX: usize = 240;
    match detail.char_indices().nth(MAX) {
        None => detail.to_owned(),
        Some((end, _)) => format!("{}… ({} bytes)", &detail[..end], detail.len()),
    }
}

fn is_blank(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_whitespace())
}

/// Length of the leading blanks of a text event, to point errors at the first real character.
fn blank_prefix(text: &str) -> u64 {
    (text.len()
        - text
            .trim_start_matches(|c: char| c.is_ascii_whitespace())
            .len()) as u64
}

/// quick-xml messages start with a capital letter; ours are lower-case throughout.
fn lower_first(detail: &str) -> String {
    let mut chars = detail.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
