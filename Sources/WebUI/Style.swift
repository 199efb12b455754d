/// The bank's stylesheet (served as /static/bank.css, never inline): phone
/// first, one column that reflows down to 320 px and at 200% zoom, a bottom
/// tab bar on phones and a top one from 720 px, AA contrast throughout,
/// focus always visible, money blurred while the tab is hidden, and a print
/// sheet that prints recovery codes alone.
package enum Style {
    package static let css = """
        :root{--ink:#17212b;--muted:#4a5866;--line:#d5dde5;--paper:#f3f5f8;--card:#fff;--brand:#0b4a6f;--brand-ink:#fff;--brand-soft:#e3eef6;
        --accent:#0d6e6e;--in:#126b3a;--in-soft:#e4f4ea;--out:#5a3a00;--danger:#a4161a;--focus:#c2410c;--radius:.75rem}
        *{box-sizing:border-box}html{-webkit-text-size-adjust:100%}
        body{margin:0;font:1.0625rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--paper);
        display:flex;flex-direction:column;min-height:100vh}
        a{color:var(--brand);text-decoration:underline;text-underline-offset:.15em}a:hover{color:var(--ink)}
        :focus-visible{outline:3px solid var(--focus);outline-offset:2px}.top :focus-visible{outline-color:#fff}
        .skip{position:absolute;inset-inline-start:.5rem;top:0;transform:translateY(-150%);background:var(--card);padding:.5rem 1rem;z-index:10}.skip:focus{transform:none}
        .top{background:var(--brand);color:var(--brand-ink)}
        .bar{display:flex;align-items:center;gap:1rem;max-width:60rem;margin:0 auto;padding:.5rem 1rem;min-height:3.5rem}
        .brand{display:flex;align-items:center;gap:.6rem;color:inherit;text-decoration:none;font-weight:700;font-size:1.15rem;margin-inline-end:auto}
        .brand:hover{color:inherit}.brand img{display:block;border-radius:.5rem}
        .top .link{color:var(--brand-ink)}.top form{margin:0}
        .tabs{display:flex;gap:.25rem}
        .tab{display:flex;align-items:center;gap:.4rem;color:var(--brand-ink);text-decoration:none;padding:.5rem .75rem;border-radius:.5rem;font-weight:600}
        .tab:hover{color:var(--brand-ink);background:#ffffff1f}.tab[aria-current=page]{background:#ffffff2e;box-shadow:inset 0 -3px 0 #fff}
        .icon{display:inline-block;width:1.35rem;height:1.35rem;background:currentColor;-webkit-mask:var(--i) center/contain no-repeat;mask:var(--i) center/contain no-repeat}
        .tab-accounts .icon{--i:url(/static/icons/accounts.svg)}.tab-transfer .icon{--i:url(/static/icons/transfer.svg)}
        .tab-settings .icon{--i:url(/static/icons/settings.svg)}
        @media (max-width:719px){
        .signed-in{padding-bottom:4.5rem}
        .tabs{position:fixed;left:0;right:0;bottom:0;z-index:5;background:var(--card);border-top:1px solid var(--line);justify-content:space-around;
        padding:.25rem .25rem calc(.25rem + env(safe-area-inset-bottom));gap:0}
        .tab{flex:1;flex-direction:column;gap:.1rem;color:var(--muted);font-size:.8rem;padding:.35rem .25rem;border-radius:.5rem}
        .tab:hover{color:var(--ink);background:var(--brand-soft)}.tab[aria-current=page]{color:var(--brand);background:var(--brand-soft);box-shadow:none}
        .tabs :focus-visible{outline-color:var(--focus)}}
        main{flex:1;width:100%;max-width:60rem;margin:0 auto;padding:1rem}
        @media (min-width:720px){main{padding:1.5rem 1rem 2.5rem}}
        h1{font-size:1.6rem;line-height:1.25;margin:.25rem 0 1rem}h1:focus{outline:none}
        h2{font-size:1.2rem;line-height:1.3;margin:0 0 .75rem}h3{font-size:1.05rem;margin:1rem 0 .5rem}
        p{margin:0 0 .9rem}.muted,.hint{color:var(--muted)}.hint{margin:-.15rem 0 .35rem;font-size:.95rem}
        footer{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;justify-content:center;padding:1.25rem 1rem;color:var(--muted);font-size:.9rem}
        .notice{background:var(--brand-soft);border-inline-start:4px solid var(--brand);padding:.7rem .9rem;border-radius:.35rem}
        .warning{background:#fff4e5;border-inline-start:4px solid #9a5b00;padding:.7rem .9rem;border-radius:.35rem}
        .error{color:var(--danger);margin:.35rem 0 0;font-weight:600}.error:empty{display:none}p.error:not([id]){margin-bottom:.9rem}
        .field{margin:0 0 1.1rem}label,legend{display:block;font-weight:600;margin-bottom:.3rem}
        input,select{width:100%;max-width:32rem;font:inherit;color:var(--ink);padding:.65rem .75rem;border:1px solid #7b8794;border-radius:.5rem;background:#fff;min-height:2.9rem}
        input[aria-invalid=true],select[aria-invalid=true]{border:2px solid var(--danger)}
        button,.button{display:inline-flex;align-items:center;justify-content:center;font:inherit;font-weight:600;padding:.65rem 1.15rem;border-radius:.5rem;
        border:2px solid var(--brand);cursor:pointer;margin:.25rem .5rem .25rem 0;min-height:2.9rem;text-decoration:none;text-align:center}
        .primary{background:var(--brand);color:#fff}.primary:hover{background:#083a58;color:#fff}
        .secondary{background:#fff;color:var(--brand)}.secondary:hover{background:var(--brand-soft);color:var(--brand)}
        .danger{background:var(--danger);border-color:var(--danger);color:#fff}
        .link{background:none;border:none;padding:.25rem 0;min-height:0;text-decoration:underline;text-underline-offset:.15em;color:var(--brand);font-weight:inherit}
        button:disabled{opacity:.6;cursor:progress}
        .actions{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem .75rem;margin:.5rem 0 1rem}.actions form{margin:0}
        .actions button,.actions .button{margin:0}
        @media (max-width:479px){.stack button,.stack .button{width:100%;margin:.3rem 0}}
        .card{background:var(--card);border-radius:var(--radius);padding:1.1rem;margin:0 0 1rem;box-shadow:0 1px 3px #17212b1f;border:1px solid #e6ebf0}
        .card>:last-child{margin-bottom:0}.narrow{max-width:34rem;margin:0 auto 1rem}.narrow p,.narrow li{overflow-wrap:anywhere}.narrow button,.narrow .button{max-width:100%;white-space:normal;overflow-wrap:anywhere}
        .factors{list-style:none;padding:0;margin:.5rem 0 1rem}.factors li{margin:.35rem 0}
        .grid{display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,17rem),1fr));margin-bottom:1rem}.grid .card{margin:0}
        .account h2 a{color:var(--ink);text-decoration:none}.account h2 a:hover{text-decoration:underline}
        .iban{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.95rem;color:var(--muted);overflow-wrap:anywhere}.block{display:block}
        .balance{margin:.5rem 0 .25rem}.balance .label{display:block;color:var(--muted);font-size:.9rem}
        .balance strong{display:block;font-size:2rem;line-height:1.2;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
        .total{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:baseline;gap:.25rem 1rem;background:var(--brand);color:#fff}
        .total .label{color:#fff}.total strong{font-size:1.6rem}
        .money{transition:filter .15s}.veiled .money{filter:blur(.6rem)}
        dl.summary{display:grid;grid-template-columns:minmax(6rem,auto) 1fr;gap:.4rem 1rem;margin:0}dl.summary+*{margin-top:1rem}dl.summary dt{color:var(--muted)}
        dl.summary dd{margin:0;font-weight:600;overflow-wrap:anywhere}
        .big{font-size:1.6rem}
        table{width:100%;border-collapse:collapse}caption{text-align:start;font-weight:600;padding:0 0 .5rem}
        th,td{padding:.6rem .5rem;border-bottom:1px solid var(--line);text-align:start;vertical-align:top}th{font-size:.9rem;color:var(--muted)}
        .amount{text-align:end;font-variant-numeric:tabular-nums;white-space:nowrap}
        td .ref,td .time{display:block;color:var(--muted);font-size:.9rem}td .ref{overflow-wrap:anywhere}
        .dir{display:inline-block;font-size:.75rem;font-weight:700;text-transform:uppercase;letter-spacing:.04em;padding:.05rem .4rem;border-radius:1rem;margin-inline-start:.35rem;vertical-align:.1em}
        .in .value{color:var(--in);font-weight:700}.in .dir{background:var(--in-soft);color:var(--in)}.out .dir{background:#f1ece4;color:var(--out)}
        .balance-cell .label{display:none}
        @media (max-width:559px){
        table.statement thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
        table.statement tr{display:grid;grid-template-columns:1fr auto;gap:.1rem .75rem;padding:.6rem 0;border-bottom:1px solid var(--line)}
        table.statement td{border:0;padding:0}table.statement .date{grid-column:1/-1;color:var(--muted);font-size:.9rem}
        table.statement .date .time{display:inline;margin-inline-start:.3rem}
        table.statement .balance-cell{grid-column:1/-1;text-align:end;color:var(--muted);font-size:.9rem}.balance-cell .label{display:inline}}
        .pager{display:flex;justify-content:space-between;gap:1rem;margin-top:1rem}
        .payee{border:0;padding:0;margin:0}
        .choices{border:0;padding:0;margin:0 0 1rem}.choices label{display:flex;gap:.6rem;align-items:center;font-weight:400;padding:.55rem .7rem;
        border:1px solid var(--line);border-radius:.5rem;margin:0 0 .5rem;cursor:pointer;max-width:32rem}.choices input{width:auto;min-height:0;margin:0}
        .choices label:has(input:checked){border:2px solid var(--brand);background:var(--brand-soft)}
        form:has(#f-to option[value=payee]:not(:checked)) .payee{display:none}
        .sitekey{display:flex;gap:1rem;align-items:center}.sitekey img{width:96px;height:96px;flex:none}.phrase{font-size:1.2rem}
        .number{font-size:4rem;font-weight:800;letter-spacing:.1em;text-align:center;margin:.5rem 0}
        .pictures{display:grid;grid-template-columns:repeat(auto-fill,minmax(7.5rem,1fr));gap:.5rem;border:0;padding:0;margin:0 0 1rem}
        .pictures label{font-weight:400;display:flex;flex-direction:column;align-items:center;gap:.25rem;border:1px solid var(--line);border-radius:.5rem;padding:.4rem;background:#fff;cursor:pointer;font-size:.9rem;min-width:0}
        .pictures label span{display:flex;align-items:center;gap:.3rem;white-space:nowrap}
        .pictures label:has(input:checked){border:2px solid var(--brand);background:var(--brand-soft)}
        .pictures input{width:auto;min-height:0}.pictures img{width:100%;max-width:56px;display:block;margin:0 auto .25rem}
        ol.codes{columns:2;column-gap:2rem;padding-inline-start:1.75rem;font-size:1.1rem}ol.codes li{margin:.2rem 0}
        code,.secret{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}.secret{font-size:1.2rem;letter-spacing:.05em;overflow-wrap:anywhere}
        .qr{display:block;background:#fff;padding:.5rem;max-width:100%;height:auto}
        ul.plain{list-style:none;padding:0;margin:0 0 1rem}ul.plain>li{padding:.75rem 0;border-bottom:1px solid var(--line)}ul.plain>li:last-child{border:0}
        .row{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25rem 1rem;align-items:baseline}
        .rename{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end}.rename .field{flex:1 1 14rem;margin:0}.rename button{margin:0}
        details{margin:.5rem 0}summary{cursor:pointer;color:var(--brand);font-weight:600}
        ul.list{list-style:none;padding:0;margin:0 0 1rem}ul.list>li{padding:.75rem 0;border-top:1px solid #e6ebf0}ul.list>li:first-child{border-top:0}ul.list .hint{margin:.25rem 0 .5rem}
        .scroll{background:linear-gradient(to right,var(--card) 30%,#fff0),linear-gradient(to left,var(--card) 30%,#fff0) 100% 0,radial-gradient(farthest-side at 0 50%,#17212b33,#17212b00),radial-gradient(farthest-side at 100% 50%,#17212b33,#17212b00) 100% 0;background-repeat:no-repeat;background-size:2rem 100%,2rem 100%,.8rem 100%,.8rem 100%;background-attachment:local,local,scroll,scroll}
        main fieldset{border:0;padding:0;margin:0 0 1rem;min-width:0}label.check{display:flex;flex-wrap:wrap;gap:.25rem .5rem;align-items:baseline;font-weight:400;margin:0}label.check input{width:auto;min-height:0;margin:0}
        .tag{display:inline-block;margin-inline-start:.5rem;padding:0 .5rem;border-radius:1rem;background:#e8eef5;color:var(--ink);font-size:.85rem;font-weight:600}
        main section+section,main section+form{margin-top:1.5rem}
        pre.command{background:#17212b;color:#f3f5f8;padding:.75rem;border-radius:.5rem;white-space:pre-wrap;overflow-wrap:anywhere}
        .chart{margin:0 0 1rem}.chart figcaption{margin:0 0 .5rem;color:var(--muted)}.chart-svg{display:block;width:100%;height:auto}
        .chart-legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;padding:0;margin:.5rem 0 1rem}.chart-legend li{display:flex;align-items:center;gap:.4rem}
        .chart{border-top:1px solid #e6ebf0;padding-top:1rem}.chart h3{font-size:1.05rem;margin:0 0 .25rem}.chart details{margin:0}
        @media print{.top,footer,.skip,.actions,.notice,form,nav{display:none!important}body{background:#fff}.card{box-shadow:none;border:0}
        ol.codes{font-size:14pt}}
        .scroll{overflow-x:auto;max-width:100%}.console-nav{display:flex;flex-wrap:wrap;gap:.4rem 1rem;margin:0 0 1rem;align-items:baseline}.console-section{margin:1.25rem 0}caption{text-align:start}
        """
}
