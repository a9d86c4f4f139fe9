//! Parsing query text into the syntax of the subset, before any table is looked at.
//!
//! `sqlparser` parses the whole of SQL; this module accepts the small part of it that
//! subscriptions support and turns it into [`SelectSyntax`], refusing everything else with a
//! [`QueryError::Unsupported`] that names the construct. The structs of `sqlparser`'s syntax
//! tree are destructured without `..`, so a clause added by a new version of `sqlparser`
//! cannot be ignored silently: the code stops compiling until it is refused here.
//!
//! Names are matched as written (case-sensitive, as the module's Rust names are).

use crate::error::QueryError;
use sqlparser::ast::{
    BinaryOperator, Distinct, Expr, GroupByExpr, Join, JoinConstraint, JoinOperator, ObjectName,
    ObjectNamePart, Query, Select, SelectFlavor, SelectItem, SelectItemQualifiedWildcardKind,
    SetExpr, Statement, TableAlias, TableFactor, TableWithJoins, UnaryOperator, Value,
    WildcardAdditionalOptions,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// The longest query text accepted, in bytes.
pub const MAX_QUERY_LEN: usize = 64 * 1024;

/// The most tokens (words, names, literals, operators and punctuation; not whitespace or
/// comments) a query may hold.
///
/// The bound is what keeps a query's syntax tree small enough to walk. `sqlparser` reads a
/// chain of one operator (`1 + 1 + … + 1`, `a OR b OR …`, `x IS NULL IS NULL …`, `v::int::int`)
/// in a loop but nests the tree it builds as deeply as the chain is long, and whatever walks
/// that tree afterwards (dropping it, cloning it, printing it) recurses once per level: a 64
/// KiB chain is 32,000 levels, which overflows a 2 MiB thread stack and aborts the process.
/// Every level of a tree takes at least one token, so counting tokens before parsing bounds
/// the depth and the size of every tree this module is given. This module itself never clones
/// or prints an expression it has not checked to be a single name or literal, so the only
/// walk over a whole tree is its drop, which stays below a tenth of a 2 MiB stack at this
/// depth even in a debug build (`subscription/tests/fuzz.rs` checks it on such a thread).
pub const MAX_QUERY_TOKENS: usize = 4096;

/// How deeply the parser may recurse (each level of parentheses takes one or more) before it
/// refuses the query. `sqlparser`'s frames are large in debug builds (a 2 MiB thread stack
/// overflows at about 60 levels), and the threads that parse queries are ordinary ones.
const MAX_NESTING: usize = 24;

/// A query of the subset as written: names not resolved yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SelectSyntax {
    /// `*` (`None`) or `t.*` (the qualifier).
    pub(crate) projection: Option<String>,
    /// The table after `FROM`.
    pub(crate) from: TableName,
    /// The `JOIN`, if there is one.
    pub(crate) join: Option<JoinSyntax>,
    /// The `WHERE` condition.
    pub(crate) filter: Option<Condition>,
}

/// A table as written in `FROM` or `JOIN`: its name and its alias.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TableName {
    pub(crate) name: String,
    pub(crate) alias: Option<String>,
}

/// `JOIN table ON left = right`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JoinSyntax {
    pub(crate) table: TableName,
    pub(crate) left: ColumnName,
    pub(crate) right: ColumnName,
}

/// A column as written: `column` or `qualifier.column`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ColumnName {
    pub(crate) qualifier: Option<String>,
    pub(crate) name: String,
}

/// A `WHERE` condition of the subset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Condition {
    /// Every part holds (a chain `a AND b AND c` is one `And` of three parts).
    And(Vec<Condition>),
    /// At least one part holds.
    Or(Vec<Condition>),
    /// `column op literal` (a literal written first is moved to the right, its operator
    /// mirrored).
    Compare {
        column: ColumnName,
        op: CompareOp,
        literal: Literal,
    },
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum CompareOp {
    /// `=`
    Eq,
    /// `!=` or `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CompareOp {
    /// The operator that compares the same way with its operands swapped (`a < b` is `b > a`).
    fn mirrored(self) -> Self {
        match self {
            Self::Lt => Self::Gt,
            Self::Le => Self::Ge,
            Self::Gt => Self::Lt,
            Self::Ge => Self::Le,
            same => same,
        }
    }

    /// Whether `ordering` (of the column's value against the literal) satisfies the operator.
    pub(crate) fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Self::Eq => ordering == Equal,
            Self::Ne => ordering != Equal,
            Self::Lt => ordering == Less,
            Self::Le => ordering != Greater,
            Self::Gt => ordering == Greater,
            Self::Ge => ordering != Less,
        }
    }
}

/// A literal as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Literal {
    /// A number, with its sign: `-12`, `3.5`.
    Number(String),
    /// `'text'`
    String(String),
    /// `true`, `false`
    Bool(bool),
    /// The hex digits of `0x…` or `X'…'`.
    Hex(String),
    /// `:sender`
    Sender,
}

/// Parses `text` as one query of the subset.
pub(crate) fn parse(text: &str) -> Result<SelectSyntax, QueryError> {
    let tokens = tokens(text, "query")?;
    match leading_words(&tokens) {
        Some(words) if words.first().is_some_and(|word| word != "SELECT") => {
            return Err(QueryError::Unsupported(words.join(" ")));
        }
        _ => {}
    }
    let statements = parser(tokens)
        .parse_statements()
        .map_err(|error| QueryError::Syntax(error.to_string()))?;
    let [statement] = <[Statement; 1]>::try_from(statements).map_err(|statements| {
        QueryError::Unsupported(format!("{} statements in one query", statements.len()))
    })?;
    match statement {
        Statement::Query(query) => query_syntax(*query),
        _ => Err(unsupported("a statement other than SELECT")),
    }
}

/// Parses `text` as a condition of the subset on its own, as a `WHERE` holds it: a table's
/// visibility filter (`owner = :sender`), which is written without a query around it.
pub(crate) fn parse_condition(text: &str) -> Result<Condition, QueryError> {
    let syntax = |error: sqlparser::parser::ParserError| QueryError::Syntax(error.to_string());
    let mut parser = parser(tokens(text, "condition")?);
    let expr = parser.parse_expr().map_err(syntax)?;
    parser.expect_token(&Token::EOF).map_err(syntax)?;
    condition(&expr)
}

/// The tokens of `text` (a `what`: a query or a condition), once its length and its number of
/// tokens are known to be within [`MAX_QUERY_LEN`] and [`MAX_QUERY_TOKENS`]. Tokenizing is a
/// loop over the text: nothing here recurses, whatever the text.
fn tokens(text: &str, what: &str) -> Result<Vec<TokenWithSpan>, QueryError> {
    if text.len() > MAX_QUERY_LEN {
        return Err(QueryError::Unsupported(format!(
            "a {what} longer than {MAX_QUERY_LEN} bytes"
        )));
    }
    let tokens = Tokenizer::new(&GenericDialect {}, text)
        .tokenize_with_location()
        .map_err(|error| QueryError::Syntax(error.to_string()))?;
    let counted = tokens
        .iter()
        .filter(|token| !matches!(token.token, Token::Whitespace(_)))
        .count();
    if counted > MAX_QUERY_TOKENS {
        return Err(QueryError::Unsupported(format!(
            "a {what} of more than {MAX_QUERY_TOKENS} tokens ({counted}: words, names, \
             literals and operators)"
        )));
    }
    Ok(tokens)
}

/// A parser over `tokens`, with the subset's bound on nesting.
fn parser(tokens: Vec<TokenWithSpan>) -> Parser<'static> {
    Parser::new(&GenericDialect {})
        .with_recursion_limit(MAX_NESTING)
        .with_tokens_with_locations(tokens)
}

/// The keyword that opens a statement, and the one after it if it is a keyword too, in capitals
/// (`INSERT INTO`, `DELETE FROM`, `UPDATE`), as a statement's kind is named: `None` when the text
/// does not open with a keyword (a parenthesis, say), which the parser then judges.
fn leading_words(tokens: &[TokenWithSpan]) -> Option<Vec<String>> {
    let mut keywords = tokens
        .iter()
        .filter(|token| !matches!(token.token, Token::Whitespace(_)))
        .map_while(|token| match &token.token {
            Token::Word(word)
                if word.keyword != Keyword::NoKeyword && word.quote_style.is_none() =>
            {
                Some(word.value.to_ascii_uppercase())
            }
            _ => None,
        });
    let first = keywords.next()?;
    let second = keywords.next();
    Some(std::iter::once(first).chain(second).collect())
}

fn unsupported(what: &str) -> QueryError {
    QueryError::Unsupported(what.to_owned())
}

fn query_syntax(query: Query) -> Result<SelectSyntax, QueryError> {
    let Query {
        with,
        body,
        order_by,
        limit_clause,
        fetch,
        locks,
        for_clause,
        settings,
        format_clause,
        pipe_operators,
    } = query;
    let refusals = [
        (with.is_some(), "WITH"),
        (order_by.is_some(), "ORDER BY"),
        (limit_clause.is_some(), "LIMIT"),
        (fetch.is_some(), "FETCH"),
        (!locks.is_empty(), "FOR UPDATE"),
        (for_clause.is_some(), "FOR"),
        (settings.is_some(), "SETTINGS"),
        (format_clause.is_some(), "FORMAT"),
        (!pipe_operators.is_empty(), "a pipe operator"),
    ];
    refuse_any(&refusals)?;
    match *body {
        SetExpr::Select(select) => select_syntax(*select),
        SetExpr::SetOperation { op, .. } => Err(unsupported(&op.to_string())),
        SetExpr::Query(_) => Err(unsupported("a parenthesized query")),
        SetExpr::Values(_) => Err(unsupported("VALUES")),
        SetExpr::Table(_) => Err(unsupported("TABLE")),
        SetExpr::Insert(_) => Err(unsupported("INSERT")),
        SetExpr::Update(_) => Err(unsupported("UPDATE")),
        SetExpr::Delete(_) => Err(unsupported("DELETE")),
        SetExpr::Merge(_) => Err(unsupported("MERGE")),
    }
}

/// The first construct whose flag is set, refused.
fn refuse_any(refusals: &[(bool, &str)]) -> Result<(), QueryError> {
    match refusals.iter().find(|(present, _)| *present) {
        Some((_, what)) => Err(unsupported(what)),
        None => Ok(()),
    }
}

fn select_syntax(select: Select) -> Result<SelectSyntax, QueryError> {
    let Select {
        select_token: _,
        optimizer_hints,
        distinct,
        select_modifiers,
        top,
        top_before_distinct: _,
        projection,
        exclude,
        into,
        from,
        lateral_views,
        prewhere,
        selection,
        connect_by,
        group_by,
        cluster_by,
        distribute_by,
        sort_by,
        having,
        named_window,
        qualify,
        window_before_qualify: _,
        value_table_mode,
        flavor,
    } = select;
    let grouped = match &group_by {
        GroupByExpr::All(_) => true,
        GroupByExpr::Expressions(expressions, modifiers) => {
            !expressions.is_empty() || !modifiers.is_empty()
        }
    };
    let refusals = [
        (!optimizer_hints.is_empty(), "an optimizer hint"),
        (matches!(distinct, Some(Distinct::Distinct)), "DISTINCT"),
        (matches!(distinct, Some(Distinct::On(_))), "DISTINCT ON"),
        (select_modifiers.is_some(), "a SELECT modifier"),
        (top.is_some(), "TOP"),
        (exclude.is_some(), "EXCLUDE"),
        (into.is_some(), "SELECT INTO"),
        (!lateral_views.is_empty(), "LATERAL VIEW"),
        (prewhere.is_some(), "PREWHERE"),
        (!connect_by.is_empty(), "CONNECT BY"),
        (grouped, "GROUP BY"),
        (!cluster_by.is_empty(), "CLUSTER BY"),
        (!distribute_by.is_empty(), "DISTRIBUTE BY"),
        (!sort_by.is_empty(), "SORT BY"),
        (having.is_some(), "HAVING"),
        (!named_window.is_empty(), "WINDOW"),
        (qualify.is_some(), "QUALIFY"),
        (value_table_mode.is_some(), "SELECT AS VALUE"),
        (flavor != SelectFlavor::Standard, "FROM before SELECT"),
    ];
    refuse_any(&refusals)?;
    let [TableWithJoins { relation, joins }] =
        <[TableWithJoins; 1]>::try_from(from).map_err(|from| match from.len() {
            0 => unsupported("SELECT without FROM"),
            _ => unsupported("several tables in FROM (join them with JOIN … ON)"),
        })?;
    let projection = projection_syntax(projection)?;
    let from = table_name(relation)?;
    let mut joins = joins.into_iter();
    let join = joins.next().map(join_syntax).transpose()?;
    if joins.next().is_some() {
        return Err(unsupported("a join of more than two tables"));
    }
    let filter = selection.as_ref().map(condition).transpose()?;
    Ok(SelectSyntax {
        projection,
        from,
        join,
        filter,
    })
}

/// `*` or `t.*`, alone.
fn projection_syntax(projection: Vec<SelectItem>) -> Result<Option<String>, QueryError> {
    let [item] = <[SelectItem; 1]>::try_from(projection)
        .map_err(|_| unsupported("selecting anything but `*` or `table.*`"))?;
    match item {
        SelectItem::Wildcard(options) => {
            plain_wildcard(options)?;
            Ok(None)
        }
        SelectItem::QualifiedWildcard(
            SelectItemQualifiedWildcardKind::ObjectName(name),
            options,
        ) => {
            plain_wildcard(options)?;
            single_name(&name).map(Some)
        }
        _ => Err(unsupported("selecting anything but `*` or `table.*`")),
    }
}

fn plain_wildcard(options: WildcardAdditionalOptions) -> Result<(), QueryError> {
    let WildcardAdditionalOptions {
        wildcard_token: _,
        opt_ilike,
        opt_exclude,
        opt_except,
        opt_replace,
        opt_rename,
        opt_alias,
    } = options;
    refuse_any(&[
        (opt_ilike.is_some(), "ILIKE after `*`"),
        (opt_exclude.is_some(), "EXCLUDE after `*`"),
        (opt_except.is_some(), "EXCEPT after `*`"),
        (opt_replace.is_some(), "REPLACE after `*`"),
        (opt_rename.is_some(), "RENAME after `*`"),
        (opt_alias.is_some(), "an alias of `*`"),
    ])
}

/// The one identifier of a name: schema-qualified names are refused.
fn single_name(name: &ObjectName) -> Result<String, QueryError> {
    match name.0.as_slice() {
        [ObjectNamePart::Identifier(ident)] => Ok(ident.value.clone()),
        _ => Err(QueryError::Unsupported(format!(
            "the qualified name `{name}`"
        ))),
    }
}

fn table_name(factor: TableFactor) -> Result<TableName, QueryError> {
    let TableFactor::Table {
        name,
        alias,
        args,
        with_hints,
        version,
        with_ordinality,
        partitions,
        json_path,
        sample,
        index_directives,
        inheritance,
    } = factor
    else {
        return Err(unsupported("anything but a table's name in FROM or JOIN"));
    };
    refuse_any(&[
        (args.is_some(), "a table function"),
        (!with_hints.is_empty(), "a table hint"),
        (version.is_some(), "a table version"),
        (with_ordinality, "WITH ORDINALITY"),
        (!partitions.is_empty(), "PARTITION"),
        (json_path.is_some(), "a JSON path"),
        (sample.is_some(), "TABLESAMPLE"),
        (!index_directives.is_empty(), "an index hint"),
        (inheritance.is_some(), "ONLY"),
    ])?;
    let alias = alias.map(alias_name).transpose()?;
    Ok(TableName {
        name: single_name(&name)?,
        alias,
    })
}

fn alias_name(alias: TableAlias) -> Result<String, QueryError> {
    if !alias.columns.is_empty() {
        return Err(unsupported("column aliases"));
    }
    Ok(alias.name.value)
}

fn join_syntax(join: Join) -> Result<JoinSyntax, QueryError> {
    let Join {
        relation,
        global,
        join_operator,
    } = join;
    if global {
        return Err(unsupported("GLOBAL JOIN"));
    }
    let constraint = match join_operator {
        JoinOperator::Join(constraint) | JoinOperator::Inner(constraint) => constraint,
        JoinOperator::Left(_) | JoinOperator::LeftOuter(_) => return Err(unsupported("LEFT JOIN")),
        JoinOperator::Right(_) | JoinOperator::RightOuter(_) => {
            return Err(unsupported("RIGHT JOIN"))
        }
        JoinOperator::FullOuter(_) => return Err(unsupported("FULL JOIN")),
        JoinOperator::CrossJoin(_) => return Err(unsupported("CROSS JOIN")),
        _ => return Err(unsupported("a join other than an inner JOIN … ON")),
    };
    let table = table_name(relation)?;
    let JoinConstraint::On(on) = constraint else {
        return Err(unsupported("a join without ON (USING, NATURAL)"));
    };
    let (left, right) = match unparenthesized(&on) {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } => (column_name(left), column_name(right)),
        _ => (None, None),
    };
    match (left, right) {
        (Some(left), Some(right)) => Ok(JoinSyntax { table, left, right }),
        _ => Err(unsupported(
            "an ON condition other than one equality of two columns",
        )),
    }
}

fn unparenthesized(mut expr: &Expr) -> &Expr {
    while let Expr::Nested(inner) = expr {
        expr = inner;
    }
    expr
}

/// The column `expr` names, if it is one.
fn column_name(expr: &Expr) -> Option<ColumnName> {
    match unparenthesized(expr) {
        Expr::Identifier(ident) => Some(ColumnName {
            qualifier: None,
            name: ident.value.clone(),
        }),
        Expr::CompoundIdentifier(idents) => match idents.as_slice() {
            [qualifier, name] => Some(ColumnName {
                qualifier: Some(qualifier.value.clone()),
                name: name.value.clone(),
            }),
            _ => None,
        },
        _ => None,
    }
}

/// The condition `expr` is. A chain of one operator (`a OR b OR c …`, which the parser nests
/// as deeply as it is long) is read in a loop into one list, so that a long chain costs no
/// stack; nesting that remains (alternating operators, parentheses) is bounded by the parser.
///
/// The tree is read by reference and never cloned or printed whole: what is taken from it
/// (names, literals, operators) is copied out, and what is outside the subset is named by
/// its kind, whatever it holds.
fn condition(expr: &Expr) -> Result<Condition, QueryError> {
    match unparenthesized(expr) {
        Expr::BinaryOp { left, op, right }
            if matches!(op, BinaryOperator::And | BinaryOperator::Or) =>
        {
            let mut parts = vec![right.as_ref()];
            let mut rest = left.as_ref();
            loop {
                match unparenthesized(rest) {
                    Expr::BinaryOp {
                        left,
                        op: inner,
                        right,
                    } if inner == op => {
                        parts.push(right);
                        rest = left;
                    }
                    first => {
                        parts.push(first);
                        break;
                    }
                }
            }
            let parts = parts
                .into_iter()
                .rev()
                .map(condition)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(match op {
                BinaryOperator::And => Condition::And(parts),
                _ => Condition::Or(parts),
            })
        }
        Expr::BinaryOp { left, op, right } => comparison(left, compare_op(op)?, right),
        other => Err(QueryError::Unsupported(describe(other))),
    }
}

fn compare_op(op: &BinaryOperator) -> Result<CompareOp, QueryError> {
    Ok(match op {
        BinaryOperator::Eq => CompareOp::Eq,
        BinaryOperator::NotEq => CompareOp::Ne,
        BinaryOperator::Lt => CompareOp::Lt,
        BinaryOperator::LtEq => CompareOp::Le,
        BinaryOperator::Gt => CompareOp::Gt,
        BinaryOperator::GtEq => CompareOp::Ge,
        other => return Err(QueryError::Unsupported(format!("the operator `{other}`"))),
    })
}

/// One side of a comparison.
enum Operand {
    Column(ColumnName),
    Literal(Literal),
}

/// The operand `expr` is, and its text as written (for messages).
fn operand(expr: &Expr) -> Result<(Operand, String), QueryError> {
    let operand = match column_name(expr) {
        Some(column) => Operand::Column(column),
        None => Operand::Literal(literal(expr)?),
    };
    // A name or a literal (anything else was refused above, unprinted): a few levels at most,
    // so printing it is shallow.
    Ok((operand, expr.to_string()))
}

/// `column op literal`, or `literal op column` turned around.
fn comparison(left: &Expr, op: CompareOp, right: &Expr) -> Result<Condition, QueryError> {
    let ((left, left_text), (right, right_text)) = (operand(left)?, operand(right)?);
    let texts = format!("(`{left_text}`, `{right_text}`)");
    match (left, right) {
        (Operand::Column(column), Operand::Literal(literal)) => Ok(Condition::Compare {
            column,
            op,
            literal,
        }),
        (Operand::Literal(literal), Operand::Column(column)) => Ok(Condition::Compare {
            column,
            op: op.mirrored(),
            literal,
        }),
        (Operand::Column(_), Operand::Column(_)) => Err(QueryError::Unsupported(format!(
            "comparing two columns in WHERE {texts}"
        ))),
        (Operand::Literal(_), Operand::Literal(_)) => Err(QueryError::Unsupported(format!(
            "a comparison without a column {texts}"
        ))),
    }
}

fn literal(expr: &Expr) -> Result<Literal, QueryError> {
    match unparenthesized(expr) {
        Expr::Value(value) => value_literal(&value.value),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match unparenthesized(expr) {
            Expr::Value(value) => match &value.value {
                Value::Number(digits, _) if !digits.starts_with('-') => {
                    Ok(Literal::Number(format!("-{digits}")))
                }
                other => Err(QueryError::Unsupported(format!("the literal `-{other}`"))),
            },
            other => Err(QueryError::Unsupported(describe(other))),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Plus,
            expr,
        } => literal(expr),
        other => Err(QueryError::Unsupported(describe(other))),
    }
}

fn value_literal(value: &Value) -> Result<Literal, QueryError> {
    match value {
        Value::Number(digits, _) => Ok(Literal::Number(digits.clone())),
        Value::SingleQuotedString(text) => Ok(Literal::String(text.clone())),
        Value::Boolean(value) => Ok(Literal::Bool(*value)),
        Value::HexStringLiteral(digits) => Ok(Literal::Hex(digits.clone())),
        Value::Placeholder(name) if name == ":sender" => Ok(Literal::Sender),
        Value::Placeholder(name) => Err(QueryError::Unsupported(format!(
            "the parameter `{name}` (the only one is `:sender`)"
        ))),
        Value::Null => Err(unsupported("NULL")),
        Value::DoubleQuotedString(text) => Err(QueryError::Unsupported(format!(
            "the double-quoted \"{text}\" (strings are written in single quotes)"
        ))),
        other => Err(QueryError::Unsupported(format!("the literal `{other}`"))),
    }
}

/// What a person would call an expression outside the subset: its kind, never its text (an
/// expression may be a tree thousands of levels deep, which printing would walk).
fn describe(expr: &Expr) -> String {
    let named = match expr {
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            ..
        } => "NOT",
        Expr::UnaryOp { op, .. } => return format!("the operator `{op}`"),
        Expr::BinaryOp { op, .. } => return format!("the operator `{op}`"),
        Expr::IsNull(_) | Expr::IsNotNull(_) => "IS NULL",
        Expr::IsTrue(_) | Expr::IsNotTrue(_) | Expr::IsFalse(_) | Expr::IsNotFalse(_) => {
            "IS TRUE / IS FALSE"
        }
        Expr::IsDistinctFrom(..) | Expr::IsNotDistinctFrom(..) => "IS DISTINCT FROM",
        Expr::In { .. } => "IN",
        Expr::Subquery(_) | Expr::Exists { .. } => "a subquery",
        Expr::Between { .. } => "BETWEEN",
        Expr::Like { .. } | Expr::ILike { .. } | Expr::SimilarTo { .. } | Expr::RLike { .. } => {
            "LIKE"
        }
        Expr::AnyOp { .. } | Expr::AllOp { .. } => "ANY / ALL",
        Expr::Function(_) => "a function call",
        Expr::Cast { .. } => "CAST",
        Expr::Case { .. } => "CASE",
        Expr::Collate { .. } => "COLLATE",
        Expr::AtTimeZone { .. } => "AT TIME ZONE",
        Expr::Interval(_) => "INTERVAL",
        Expr::Tuple(_) => "a tuple",
        Expr::Array(_) => "an array",
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => "a column alone as a condition",
        Expr::Value(_) => "a literal alone as a condition",
        _ => "an expression other than a column compared with a literal",
    };
    named.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str) -> ColumnName {
        ColumnName {
            qualifier: None,
            name: name.to_owned(),
        }
    }

    #[test]
    fn a_condition_alone_parses_with_the_sender_parameter() {
        assert_eq!(
            parse_condition("owner = :sender"),
            Ok(Condition::Compare {
                column: column("owner"),
                op: CompareOp::Eq,
                literal: Literal::Sender,
            })
        );
        assert_eq!(
            parse_condition(":sender = owner OR shared = true"),
            Ok(Condition::Or(vec![
                Condition::Compare {
                    column: column("owner"),
                    op: CompareOp::Eq,
                    literal: Literal::Sender,
                },
                Condition::Compare {
                    column: column("shared"),
                    op: CompareOp::Eq,
                    literal: Literal::Bool(true),
                },
            ]))
        );
    }

    #[test]
    fn a_condition_is_one_expression_of_the_subset() {
        let refused = |text: &str| parse_condition(text).expect_err(text);
        assert!(matches!(
            refused("owner = :sender; DROP TABLE t"),
            QueryError::Syntax(_)
        ));
        assert!(matches!(
            refused("owner = :sender extra"),
            QueryError::Syntax(_)
        ));
        assert!(matches!(refused(""), QueryError::Syntax(_)));
        assert!(matches!(refused("owner ="), QueryError::Syntax(_)));
        assert_eq!(
            refused("owner IN (1, 2)"),
            QueryError::Unsupported("IN".to_owned())
        );
        assert_eq!(
            refused("owner = :reader"),
            QueryError::Unsupported(
                "the parameter `:reader` (the only one is `:sender`)".to_owned()
            )
        );
        assert!(matches!(
            refused("owner = (SELECT 1)"),
            QueryError::Unsupported(_)
        ));
    }
}
