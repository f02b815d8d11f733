; Names bound by imports. One match per imported item. Captures:
;   @import          the import statement
;   @import.module   `import <dotted>`: the module path (binds its first component, or the alias)
;   @import.from     `from <module> import ...`: the module (dotted_name or relative_import)
;   @import.name     `from ... import <name>`: the imported name
;   @import.alias    `... as <alias>`: the bound name
;   @import.item     an aliased item as a whole (`a.b as c`)
(import_statement name: (dotted_name) @import.module) @import
(import_statement
  name: (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias) @import.item) @import
(import_from_statement module_name: (_) @import.from name: (dotted_name) @import.name) @import
(import_from_statement
  module_name: (_) @import.from
  name: (aliased_import name: (dotted_name) @import.name alias: (identifier) @import.alias) @import.item) @import
